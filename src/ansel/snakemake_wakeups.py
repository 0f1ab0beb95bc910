"""Snakemake's scheduler woken by at most one pending timer per delay (installed by the Snakefile).

Snakemake 9 (``JobScheduler.schedule``) ends every scheduling round that has jobs waiting by
starting a timer that wakes the scheduler again after its job-rate limiter's span (on by default:
100 jobs per 1 s), whether or not the limiter held a job back; the round that timer wakes starts
another. Each job that ends wakes a round of its own, so each adds a chain that runs while jobs
wait: with the smoke DAG's ~290 trainings waiting for 2 cores, hundreds of rounds a second by the
end, each statting every waiting job's inputs, and the Snakemake process takes the cores its jobs
need (snakemake/snakemake#3804: threads pile up). One pending timer still wakes the scheduler
when the limiter held jobs back, and no chain multiplies.
"""

from __future__ import annotations

import threading

from snakemake.scheduling.job_scheduler import JobScheduler

UPSTREAM = JobScheduler.__dict__.get("_schedule_reevalutation")  # sic: Snakemake's spelling


def schedule_reevaluation(scheduler, delay: float) -> None:
    """A scheduling round in ``delay`` seconds, unless one with that delay is already pending."""
    pending = scheduler.__dict__.setdefault("_ansel_pending_wakeups", set())
    if delay in pending:
        return
    pending.add(delay)

    def wake() -> None:
        pending.discard(delay)  # before the release: the round it wakes may schedule the next one
        scheduler._open_jobs.release()

    timer = threading.Timer(delay, wake)
    timer.daemon = True  # a wake-up after the last job has nothing to do: exiting never waits for it
    timer.start()


def install() -> None:
    """Replace Snakemake's re-evaluation timer (where this Snakemake has it: a later one may not)."""
    if UPSTREAM is not None:
        JobScheduler._schedule_reevalutation = schedule_reevaluation
