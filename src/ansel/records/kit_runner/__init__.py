"""The kit's runner on the GPU machine (``gpu-kit/run.sh``): a record's benchmarks, cost measurements
and trainings against a deadline, then one archive of what they made.

Each record's jobs run in order: its benchmarks and its cost measurement alone on the device (they are
timings), then its trainings concurrently, as many at once as the device's memory (from the shapes'
measured peaks) and its cores allow, each training followed by its evaluation. Nothing is started after
the deadline, and what runs then is stopped: a training keeps its last finished epoch in ``state.pt``,
so a second ``run.sh`` on the same kit resumes it (to the same bytes on the same machine) and keeps
every finished run.

The GPU image has torch, numpy, pandas, pyarrow and yaml: nothing here imports snakemake, dvc, dvclive,
gensim, jieba, jsonschema, bm25s, nltk or ranx (``tests/gpukit`` runs it under a Python that cannot).
"""
