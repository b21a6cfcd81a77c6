"""This room's instrumented processes keep their live sockets under each test's tmp dir."""

from tests.helpers.private_live_dir import private_live_dir  # noqa: F401  (autouse)
