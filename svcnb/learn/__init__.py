"""What learns the service: what it answered where the spec says "not shown", and a copy of it.

:mod:`~svcnb.learn.observe` is the one pass of GET requests that :mod:`~svcnb.learn.doctor`
(``svcnb doctor``) judges and :mod:`~svcnb.learn.record` (``--record``) states as a dialect file;
:mod:`~svcnb.learn.rehearsal` is a stored snapshot as a sandbox's account (``svcnb.rehearse``).
The modules are imported on their own: the doctor never loads the rehearsal, nor it the doctor.
"""
