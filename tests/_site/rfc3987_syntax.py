"""Stands in for ``rfc3987_syntax`` in ``make test``'s processes (on PYTHONPATH, set by the
Makefile): importing the real one builds its IRI grammar, about 3.5 s of CPU, and jsonschema
imports it for its "iri" format check whenever it is installed. Every process of the suite pays
that: pytest and each xdist worker (nbval imports nbformat), and each Jupyter kernel, JupyterLab
and notebook run (ipykernel and nbclient import jsonschema), some thirty a run on 2 CPUs.
Nothing svcnb does checks an IRI's syntax; jsonschema skips the "iri" format without it."""

raise ImportError("rfc3987_syntax is left out of the test processes (tests/_site)")
