"""The GPU record kit: a lent GPU's quarter hour turned into a committed record.

``build`` (CPU, before the lease: ``make gpu-kit RECORD=<name>``) packs one ignored folder with
everything the record's jobs need; ``device`` (on the GPU machine: ``gpu-kit/run.sh``) runs them
against a deadline into one archive; ``unpack`` (CPU, after: ``make gpu-unpack FILE=<archive>``)
places the record under ``reports/device/<record>/``. Records are declared in
``reports/device/records.yaml``; ``reports/device/QUEUE.md`` orders them.

The device side imports only what the GPU machine has (torch, numpy, pandas, pyarrow, yaml):
never snakemake, dvc, dvclive, gensim, jieba, jsonschema, bm25s or nltk.
"""

KIT_FILE = "kit.json"
# Runs sharing one GPU slow each other once it is busy: measured on an H200, 12 AP WikiQA trainings at once
# (GPU 92% busy) each ran ~5x slower than alone, i.e. about 2.4 runs' worth of work at a time (the kit's
# packing, which ``ansel plan`` prices leases at).
GPU_PARALLEL = 2.4
