"""Records: the committed results under ``reports/``, each a folder of runs and what was rendered from
them (``layout`` says what a record holds; ``items`` names the tables and figures a record renders).

- ``collect``: runs trained in this checkout collected into a record (``ansel collect-record``).
- The GPU record kit, a lent GPU's quarter hour turned into a record: ``kit_pack`` (CPU, before the
  lease: ``make gpu-kit RECORD=<name>``, records declared in ``reports/device/records.yaml`` and read
  by ``declared``) packs one folder with everything the record's jobs need, ``kit_summary`` prints what
  it holds and costs; ``kit_runner`` (on the GPU machine: ``gpu-kit/run.sh``) runs them against a
  deadline into one archive; ``kit_unpack`` (CPU, after: ``make gpu-unpack FILE=<archive>``) places the
  record under ``reports/device/<record>/`` and ``device_readme`` writes its README.
  ``reports/device/QUEUE.md`` orders the kits.
- ``placing``: a record changes only as a whole, staged beside it under a lock.
- ``render``: a record's tables and figures by the workflow's own table and figure rules.
- ``front_page``: the README's "Results at a glance", from the records (``ansel front-page``).

Nothing is imported here: the kit's runner imports this package on the GPU image.
"""
