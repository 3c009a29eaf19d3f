"""Root of the test tree. Being here makes pytest (import mode "prepend") put ``tests/``
on ``sys.path``, so test modules anywhere below can ``import _shared_servers``."""
