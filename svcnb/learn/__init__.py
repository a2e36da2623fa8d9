"""What learns the service: what it answered where the spec says "not shown", and a copy of it.

- :mod:`svcnb.learn.observe`: the one pass of GET requests both of the next two read, and the
  readers of each open point (words, money, times, units, deliveries, rate limit);
- :mod:`svcnb.learn.doctor`: ``svcnb doctor``, each open point as proven, pinned or assumed;
- :mod:`svcnb.learn.record`: ``svcnb doctor --record``, the same points as a dialect file a
  sandbox speaks (a twin of the service);
- :mod:`svcnb.learn.rehearsal`: a stored snapshot as a sandbox's account (``svcnb.rehearse``).

The modules are imported on their own: the doctor never loads the rehearsal, nor it the doctor.
"""
