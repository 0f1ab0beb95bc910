"""One module per family of architectures, each registering its names with
``ansel.models.registry.register``; the registry finds them by listing this package.

These modules import no torch: a module holds each architecture's hyperparameters (an
``ansel.models.hparams.HParams`` dataclass) and a builder that imports the building blocks
(encoders, compositions, scorers, ``rankers.assemble``) when it is called; the torch modules of
an architecture of its own are in ``ansel.models`` under the same name (``archs.mvlstm`` builds
``ansel.models.mvlstm.MVLSTM``), the building blocks in modules named for their job. Builders create
the modules with parameters in a fixed order (embedding, encoder, then a scorer before a
composition): that order of torch's random draws sets every initial weight, so changing it
changes every trained result.
"""
