"""Place a kit's archive as records (CPU, after the lease): ``ansel gpu-unpack ARCHIVE``.

Each record goes to ``reports/device/<record>/`` in the layout of every record (``runs/<dataset>/
<model>/seed<k>/``, ``costs/``, ``bench/``, ``device.json``), an earlier unpack of the same record
kept where this one has nothing newer; then its README is written from what the archive holds
(``device_readme``). A record with finished runs has its tables rendered from them (``render``).

An archive is data (DESIGN.md principle 16): a member that is not a plain file or folder is refused,
every name read from it (a record, a run's dataset, model and seed) is checked as a plain name, and
each record is staged and checked whole (``ansel.records.placing``: its setting against the record's, each
run's config against the kit's, each finished run's metrics.json against its run file) before it
replaces the record, under a lock on ``reports/device/``. A refusal names the archive's file and
places nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
import zlib
from pathlib import Path

from ansel import targets as T
from ansel.config import root
from ansel.files import locked, replace_tree, write_text_atomic
from ansel.jsonfile import read_json
from ansel.names import plain_name
from ansel.records.device_readme import write_readme
from ansel.records.layout import (
    DEVICE_DIR,
    DEVICE_PARTS,
    KIT_FILE,
    LEASES_FILE,
    UNFINISHED_FILES,
    RecordRefused,
    run_name,
)
from ansel.records.placing import check_finished, check_same_setting, check_setting, staged_record, write_setting


def read_archive(files: list[Path]) -> tarfile.TarFile:
    """The archive, from its parts joined in the order given."""
    data = b"".join(f.read_bytes() for f in files)
    return tarfile.open(fileobj=io.BytesIO(data), mode="r:gz")


def unpack(
    files: list[Path], device_minutes: float | None = None, render: bool = True, dest: Path | None = None
) -> list[Path]:
    """Each record of the archive into ``dest`` (default ``reports/device/``) as ``<record>/``."""
    dest = dest or root() / DEVICE_DIR
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise SystemExit(f"ansel gpu-unpack: no such file: {', '.join(missing)}")
    shown = ", ".join(map(str, files))
    dest.mkdir(parents=True, exist_ok=True)
    with locked(dest), tempfile.TemporaryDirectory(dir=dest, prefix=".unpack-") as tmp_dir:
        tmp = Path(tmp_dir) / "archive"
        try:
            kit = _extract(files, tmp, shown)
            with contextlib.ExitStack() as stages:
                staged = [
                    (rec, stages.enter_context(staged_record(dest / rec["name"])))
                    for rec in kit["records"]
                    if (tmp / rec["name"]).is_dir()
                ]
                for rec, stage in staged:
                    _stage(rec, tmp / rec["name"], stage, kit, files[0], device_minutes, render, dest)
                for rec, stage in staged:  # every record checked and built: now each replaces its old self
                    replace_tree(stage, dest / rec["name"])
                    print(f"{dest / rec['name']}: placed")
        except ValueError as e:  # RecordRefused, or a file of the archive that is not JSON
            raise SystemExit(f"ansel gpu-unpack: {str(e).replace(f'{tmp}/', f'{shown}: ')}") from None
        except subprocess.CalledProcessError as e:
            raise SystemExit(
                f"ansel gpu-unpack: {shown}: rendering the tables failed ({e}; Snakemake's message "
                "above); nothing was placed (--no-render places the runs alone)"
            ) from None
        except OSError as e:  # a full disk, say: the staging is removed, the records are as they were
            raise SystemExit(
                f"ansel gpu-unpack: {shown}: {f'{e.filename}: ' if e.filename else ''}"
                f"{e.strerror or e}; nothing was placed"
            ) from None
    return [dest / rec["name"] for rec, _ in staged]


def _extract(files: list[Path], into: Path, shown: str) -> dict:
    """The archive's plain files and folders into ``into``; kit.json read and its records' keys checked."""
    try:
        with read_archive(files) as tar:
            if odd := [
                m.name
                for m in tar.getmembers()
                if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in Path(m.name).parts
            ]:
                raise RecordRefused(
                    f"{shown}: {odd[0]}: a link, a special file or a path out of the archive's "
                    f"folder ({len(odd)} in all): a kit's archive holds plain files and folders only"
                )
            tar.extractall(into, filter="data")
    except (tarfile.TarError, EOFError, zlib.error) as e:  # a part missing, out of order, or cut short
        raise SystemExit(
            f"ansel gpu-unpack: {shown}: not a whole kit archive (give every .partNN, in order): {e}"
        ) from None
    if not (into / KIT_FILE).exists():
        raise SystemExit(f"ansel gpu-unpack: {shown}: no {KIT_FILE}: not made by gpu-kit/run.sh")
    try:
        kit = read_json(into / KIT_FILE)
    except ValueError as e:
        raise RecordRefused(str(e)) from None
    where = f"{shown}: {KIT_FILE}"
    if not isinstance(kit, dict) or not isinstance(kit.get("records"), list):
        raise RecordRefused(f"{where}: no list of records")
    for i, rec in enumerate(kit["records"]):
        at = f"{where}: records[{i}]"
        if not isinstance(rec, dict):
            raise RecordRefused(f"{at}: not a record")
        try:
            plain_name(rec.get("name"), f"{at}: name")
        except ValueError as e:
            raise RecordRefused(str(e)) from None
        for key, kind in (("preset", str), ("config", dict), ("items", dict), ("runs", list)):
            if not isinstance(rec.get(key), kind):
                raise RecordRefused(
                    f"{at} ({rec['name']}): {key!r} missing or not a {kind.__name__}: not made by "
                    "this project's gpu-kit; nothing was placed"
                )
    return kit


def _stage(
    rec: dict, src: Path, stage: Path, kit: dict, archive: Path, device_minutes: float | None, render: bool, dest: Path
) -> None:
    """The record ``stage`` (a copy of the old one) with the archive's ``src`` checked and added."""
    check_setting(stage, rec["preset"], rec["config"], f"{src}")
    kit_runs = {}
    for run in [*rec["runs"], *rec.get("cpu_runs", [])]:
        name = run_name(run.get("config") or {}, f"{src.parent / KIT_FILE}: {rec['name']}: {run.get('dir')}")
        if run.get("dir") != name:
            raise RecordRefused(
                f"{src.parent / KIT_FILE}: {rec['name']}: run {run.get('dir')!r} holds the config of {name}"
            )
        kit_runs[name] = run["config"]
    for held in sorted(stage.glob("runs/*/*/*/config.json")):  # the record's runs: still its setting
        name = str(held.parent.relative_to(stage))
        if name in kit_runs:
            check_same_setting(
                read_json(held),
                kit_runs[name],
                f"{dest / rec['name'] / name}/config.json",
                f"the kit's config of it ({KIT_FILE})",
            )
    if odd := sorted(p.name for p in src.iterdir() if p.name not in DEVICE_PARTS):
        raise RecordRefused(f"{src / odd[0]}: not a part of a record ({', '.join(sorted(DEVICE_PARTS))})")
    for run in sorted(p for p in src.glob("runs/*/*/*") if p.is_dir()):
        _check_run(run, src, kit_runs)
    _merge(src, stage, _stamp(archive))
    add_lease(
        stage,
        lease_entry(archive, kit, src, device_minutes),
        (src.parent / "log.txt").read_text() if (src.parent / "log.txt").exists() else "",
    )
    write_setting(stage, {k: rec.get(k) for k in ("name", "preset", "config", "about", "items")})
    waiting: dict[str, list[str]] = {}
    if render and rec.get("items"):
        from ansel.records.render import render_items

        _, waiting = render_items(rec, stage, siblings(dest, rec))
    write_readme(rec, stage, waiting)


def _check_run(run: Path, src: Path, kit_runs: dict[str, dict]) -> None:
    """One run of the archive: a run of the kit, at its own directory, of the kit's config, and, finished,
    every file of a finished run with its metrics.json what its run file gives."""
    name = str(run.relative_to(src))
    if name not in kit_runs:
        raise RecordRefused(f"{run}: not a run of the kit ({KIT_FILE} lists {len(kit_runs)})")
    finished = (run / "metrics.json").exists()
    if not finished and (odd := sorted({p.name for p in run.iterdir()} - UNFINISHED_FILES)):
        raise RecordRefused(f"{run}: an unfinished run (no metrics.json) with {', '.join(odd)}: half written")
    if not finished and not (run / "config.json").exists():  # cut before it wrote one: its state alone travels
        return
    try:
        cfg = read_json(run / "config.json")
    except (ValueError, FileNotFoundError) as e:
        raise RecordRefused(f"{e}; nothing was placed") from None
    if (at := run_name(cfg, f"{run}/config.json")) != name:
        raise RecordRefused(f"{run}/config.json: a run of {at}, found at {name}")
    check_same_setting(cfg, kit_runs[name], f"{run}/config.json", f"the kit's config of it ({KIT_FILE})")
    if finished:
        check_finished(run, "run.trec.gz", root() / T.processed_dir(cfg["dataset"]))


def siblings(dest: Path, rec: dict) -> list[Path]:
    """The other records under ``dest`` of the same preset and overrides (their runs fill the same tables)."""
    found = []
    for path in sorted(dest.glob("*/record.json")):
        other = json.loads(path.read_text())
        if (
            other["name"] != rec["name"]
            and other["preset"] == rec["preset"]
            and other.get("config") == rec.get("config")
        ):
            found.append(path.parent)
    return found


def lease_entry(archive: Path, kit: dict, src: Path, device_minutes: float | None) -> dict:
    """What one lease did for a record: its archive, kit, device and phases (``device.json``)."""
    info = json.loads((src / "device.json").read_text()) if (src / "device.json").exists() else {}
    return {
        "archive": re.sub(r"\.part\d+$", "", archive.name),
        "kit_commit": kit.get("commit"),
        "records": [r["name"] for r in kit["records"]],
        "device_minutes": device_minutes,
        **{
            k: info.get(k)
            for k in ("started", "gpu", "nvidia_smi", "cpu", "cpu_capability", "torch", "cuda", "cores", "sessions")
        },
    }


def add_lease(dst: Path, entry: dict, log: str) -> None:
    """``leases.json`` (the record's leases in time order, one per archive: unpacking again replaces
    it) and the lease's runner log under ``logs/``."""
    path = dst / LEASES_FILE
    leases = [e for e in (json.loads(path.read_text()) if path.exists() else []) if e["archive"] != entry["archive"]]
    leases = sorted([*leases, entry], key=lambda e: e.get("started") or 0)
    write_text_atomic(path, json.dumps(leases, indent=1) + "\n")
    if log:
        write_text_atomic(dst / "logs" / entry["archive"].replace(".tar.gz", ".txt"), log)


def _stamp(archive: Path) -> str:
    """The lease's UTC time as run.sh named its archive (``record-<names>-<YYYYMMDDTHHMMSSZ>.tar.gz``)."""
    found = re.search(r"(\d{8}T\d{6}Z)\.tar\.gz", archive.name)
    return found.group(1) if found else re.sub(r"\W+", "-", archive.name)


def _merge(src: Path, dst: Path, stamp: str) -> None:
    """Copy ``src`` over ``dst``: a finished run replaces its old self wholly (an unfinished one's state
    included); an unfinished one never replaces a finished one. A benchmark's figures never replace
    an earlier lease's (a cut lease, or another GPU, would lose them): a differing one lands beside
    it as ``bench/<name>-<stamp><suffix>``. Nor do its measured costs: a lease that did not carry the
    earlier costs (a speed entry's kit carries none) measured others, so ``costs/<device>.json`` is the
    union, this lease's measurement of a shape replacing the earlier one, and a log it did not extend
    is appended to the held one."""
    for run in sorted(p for p in src.glob("runs/*/*/*") if p.is_dir()):
        target = dst / run.relative_to(src)
        if (run / "metrics.json").exists():
            shutil.rmtree(target, ignore_errors=True)
        elif (target / "metrics.json").exists():
            continue
        shutil.copytree(run, target, dirs_exist_ok=True)
    for bench in sorted(p for p in src.glob("bench/*") if p.is_file()):
        held = dst / bench.relative_to(src)
        if held.exists() and held.read_bytes() != bench.read_bytes():
            bench.rename(bench.with_name(f"{bench.stem}-{stamp}{bench.suffix}"))
    for cost in sorted(p for p in src.glob("costs/*") if p.is_file()):
        held = dst / cost.relative_to(src)
        if not held.exists():
            continue
        if cost.suffix == ".json":
            merged = {**read_json(held), **read_json(cost)}
            cost.write_text(json.dumps(merged, indent=2, sort_keys=True) + "\n")
        elif not cost.read_bytes().startswith(held.read_bytes()):
            cost.write_bytes(held.read_bytes() + cost.read_bytes())
    for part in sorted(p for p in src.iterdir() if p.name != "runs"):
        (
            shutil.copytree(part, dst / part.name, dirs_exist_ok=True)
            if part.is_dir()
            else shutil.copy2(part, dst / part.name)
        )
