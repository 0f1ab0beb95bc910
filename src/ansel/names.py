"""Names from outside (an archive, a run's config, a raw file) checked before they become paths
(DESIGN.md principle 16): a plain name is one path component that stays where it is joined."""

from __future__ import annotations

import re

# One component: no separator, no control character, not empty and not starting with "." (".", "..",
# hidden files) or "-" (an option to the commands it reaches). Variants are ``<model>@key=<JSON value>``.
_PLAIN = re.compile(r"[^./\\\-\x00-\x1f\x7f][^/\\\x00-\x1f\x7f]*")


class NotPlainName(ValueError):
    """A name that is not a plain name; the message says where it was read."""


def plain_name(value: object, where: str) -> str:
    """``value`` (a seed's int as its text) if it is a plain name, else ``NotPlainName`` naming ``where``."""
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not _PLAIN.fullmatch(text):
        raise NotPlainName(
            f"{where}: {value!r} is not a plain name (one path component, not starting with "
            "'.' or '-'): refused before it becomes a path"
        )
    return text
