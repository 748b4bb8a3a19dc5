"""Where worker processes and threads are started, below the command line and the analyses that use them.

:mod:`~memvelope_tools._workers.processes` holds the one rule for how a worker process starts (forked
while this process runs a single thread, else from a fork server, else spawned), starts pools of
worker processes bound to this one, and runs tasks in them or on a Dask cluster.
:mod:`~memvelope_tools._workers.children` converts an export in a child process forked before the
command loads its heavy libraries, the envelope coming back in a file or through a pipe.
:mod:`~memvelope_tools._workers.threads` holds the pool of worker threads for the text work, and runs
a few calls at a time on threads of their own.
"""
