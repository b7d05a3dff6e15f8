"""Python side of memmut-memstore, memmut's swap-disk data plane.

:mod:`memmut.memstore.client` speaks the control protocol (line-delimited
JSON, version 1); :mod:`memmut.memstore.reuse` reads Geiger's
reuse-distance histograms. The server itself is the Rust crate in
``memstore/`` at the top of the source tree, run as its own service
(tests start it with ``tests/harness/memstore.py``).
"""
