"""Snakemake's scheduler wake-ups (ansel.snakemake_wakeups): the chains Snakemake starts, and one
pending timer per delay once the Snakefile installs the replacement."""

import threading
import time
import types

from snakemake.scheduling.job_scheduler import JobScheduler

from ansel import snakemake_wakeups


def rounds_woken(schedule, calls: int, delay: float = 0.05) -> int:
    """The scheduling rounds ``calls`` re-evaluations in a row wake (each call: one round's end)."""
    scheduler = types.SimpleNamespace(_open_jobs=threading.Semaphore(0))
    for _ in range(calls):
        schedule(scheduler, delay)
    time.sleep(delay * 10)
    woken = 0
    while scheduler._open_jobs.acquire(blocking=False):
        woken += 1
    return woken


def test_snakemake_starts_a_wakeup_per_round():
    # the cause: 50 rounds (50 jobs ended) leave 50 chains; when Snakemake stops it, drop the module
    assert snakemake_wakeups.UPSTREAM is not None
    assert rounds_woken(snakemake_wakeups.UPSTREAM, 50) == 50


def test_one_pending_wakeup_per_delay():
    assert rounds_woken(snakemake_wakeups.schedule_reevaluation, 50) == 1


def test_a_wakeup_after_the_last_fired_is_scheduled_again():
    scheduler = types.SimpleNamespace(_open_jobs=threading.Semaphore(0))
    for _ in range(2):  # the round a wake-up starts schedules the next one
        snakemake_wakeups.schedule_reevaluation(scheduler, 0.02)
        assert scheduler._open_jobs.acquire(timeout=5)


def test_installed():
    before = JobScheduler.__dict__["_schedule_reevalutation"]
    try:
        snakemake_wakeups.install()
        assert JobScheduler._schedule_reevalutation is snakemake_wakeups.schedule_reevaluation
    finally:
        JobScheduler._schedule_reevalutation = before
