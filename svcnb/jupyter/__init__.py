"""What serves Jupyter: the shipped notebooks (:mod:`~svcnb.jupyter.notebooks`), ``svcnb lab``
(:mod:`~svcnb.jupyter.lab`) and ``svcnb demo`` (:mod:`~svcnb.jupyter.demo`); README, "Two
commands". The modules are imported on their own: ``svcnb lab`` never loads the demo's reports.
(``svcnb.extras``, which names the Jupyter extra a command needs, stays a leaf below the panels.)
"""
