"""Database URLs as operators write them, mapped to the drivers we ship."""

from __future__ import annotations

import pytest

from vgpucloud.errors import ConfigError
from vgpucloud.storage.engine import create_engine, masked, normalise_url


@pytest.mark.parametrize(("given", "used"), [
    ("postgresql://u:p@db/vgpucloud", "postgresql+psycopg://u:***@db/vgpucloud"),
    ("postgres://u@db/vgpucloud", "postgresql+psycopg://u@db/vgpucloud"),
    ("mysql://root@db/vgpucloud", "mysql+pymysql://root@db/vgpucloud?charset=utf8mb4"),
    ("mariadb://root@db/vgpucloud", "mysql+pymysql://root@db/vgpucloud?charset=utf8mb4"),
    ("sqlite:////var/lib/vgpucloud/db.sqlite", "sqlite+pysqlite:////var/lib/vgpucloud/db.sqlite"),
])
def test_operator_urls_map_to_shipped_drivers(given, used):
    assert masked(normalise_url(given)) == used


@pytest.mark.parametrize("url", ["oracle://scott@db/x", "not a url"])
def test_unsupported_urls_are_config_errors(url):
    with pytest.raises(ConfigError, match="connection"):
        normalise_url(url)


def test_sqlite_engine_uses_wal_and_foreign_keys(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'x.sqlite'}")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()
