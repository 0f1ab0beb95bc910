"""`ansel --help` and `ansel <verb> --help` tell a new user what each verb and option is: every verb
has its line in the verb list and a description, every option a help text, and no text stops
mid-sentence."""

import argparse

import pytest

from ansel import cli, commands

# A last word that leaves its sentence unfinished (the help texts are lower-case phrases)
UNFINISHED = {"a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "its", "of", "on", "or", "the", "to"}


def verbs() -> argparse._SubParsersAction:
    return next(a for a in commands.parser()._actions if isinstance(a, argparse._SubParsersAction))


def unfinished(text: str | None) -> bool:
    """Empty, or ending on a comma or the like, a possessive or a word that needs another after it."""
    words = (text or "").split()
    if not words:
        return True
    last = words[-1]
    return not (last[-1].isalnum() or last[-1] in ".)]}") or last.endswith("'s") or last.lower() in UNFINISHED


def test_unfinished_texts_are_recognised():
    assert unfinished("{seed} in --run-dir and --timings names each seed's")
    assert unfinished("the files of") and unfinished("") and unfinished(None) and unfinished("rounds,")
    assert not unfinished("the run's folder (results/runs/<dataset>/<model>/seed<k>)")


def test_ansel_help_says_what_ansel_is_and_lists_each_verb_with_its_line(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "docs/running.md" in said and "snakemake" in said
    lines = {a.dest: a.help for a in verbs()._choices_actions}
    assert set(lines) == set(verbs().choices)
    for name, line in lines.items():
        assert not unfinished(line), f"ansel --help: {name}: {line!r}"
        assert f"{name} {line}" in said, f"ansel --help does not list {name} with its line"


@pytest.mark.parametrize("name", list(verbs().choices))
def test_a_verbs_help_describes_it_and_each_of_its_options(name):
    verb = verbs().choices[name]
    assert not unfinished(verb.description), f"ansel {name} --help: {verb.description!r}"
    for option in verb._actions:
        if not isinstance(option, argparse._HelpAction):
            shown = "/".join(option.option_strings) or option.dest
            assert not unfinished(option.help), f"ansel {name} {shown}: {option.help!r}"


def test_output_into_a_reader_that_went_away_ends_quietly(tmp_path):
    """`ansel plan ... | head -1` ended in a BrokenPipeError traceback: a closed pipe now ends it as a
    Unix tool ends (status 141, nothing on stderr)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "ANSEL_FORKSERVER": ""}
    cmd = [sys.executable, "-m", "ansel.cli", "plan", "--preset", "smoke", "--costs", str(tmp_path)]
    done = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    done.stdout.close()  # before its first line
    assert done.wait() == 141 and done.stderr.read() == b""
