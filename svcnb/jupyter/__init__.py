"""What serves Jupyter: the notebooks svcnb ships and the commands that open them.

- :mod:`svcnb.jupyter.notebooks`: the shipped notebooks and their copies in a working folder;
- :mod:`svcnb.jupyter.lab`: ``svcnb lab``, JupyterLab with a sandbox for its kernels;
- :mod:`svcnb.jupyter.demo`: ``svcnb demo``, a simulated customer's notebooks as HTML pages.

The modules are imported on their own: ``svcnb lab`` never loads the demo's reports.
(``svcnb.extras``, which names the Jupyter extra a command needs, stays a leaf below the panels.)
"""
