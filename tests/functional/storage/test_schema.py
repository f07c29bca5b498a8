"""`vgpucloud db sync`: migrations equal the table definitions, and syncing is idempotent."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import func, insert, select

from vgpucloud.cli.main import main
from vgpucloud.storage import schema
from vgpucloud.storage import tables as t


def test_migrated_schema_matches_table_definitions(db_engine):
    with db_engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, t.metadata) == []


def test_second_sync_changes_nothing(database_url, db_engine):
    report = schema.sync(database_url)
    assert report.revision_before == report.revision_after == schema.head_revision()
    assert (report.resource_classes_added, report.traits_added) == ([], [])
    with db_engine.connect() as connection:
        assert connection.scalar(select(func.count()).select_from(t.traits)) == len(
            schema.standard_traits())


def test_sync_restores_a_missing_standard_trait_and_keeps_custom_ones(database_url, db_engine):
    with db_engine.begin() as connection:
        connection.execute(t.traits.delete().where(t.traits.c.name == "COMPUTE_NODE"))
        connection.execute(insert(t.traits).values(name="CUSTOM_MINE"))
    report = schema.sync(database_url)
    assert report.traits_added == ["COMPUTE_NODE"]
    with db_engine.connect() as connection:
        assert connection.scalar(select(t.traits.c.id).where(t.traits.c.name == "CUSTOM_MINE"))


def test_cli_sync_on_empty_sqlite_then_version(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'fresh.sqlite'}"
    assert main(["db", "sync", "--database-url", url]) == 0
    first = capsys.readouterr().out
    assert "upgraded from empty database" in first
    assert main(["db", "sync", "--database-url", url]) == 0
    assert "already at revision" in capsys.readouterr().out
    assert main(["db", "version", "--database-url", url]) == 0
    assert f"{schema.head_revision()} (up to date)" in capsys.readouterr().out


def test_cli_flag_overrides_config_file(tmp_path, capsys):
    from_file = tmp_path / "from_file.sqlite"
    from_flag = tmp_path / "from_flag.sqlite"
    conf = tmp_path / "vgpucloud.conf"
    conf.write_text(f"[database]\nconnection = sqlite:///{from_file}\n")
    assert main(["db", "sync", "--config-file", str(conf)]) == 0
    assert from_file.exists()
    assert main(["db", "sync", "--config-file", str(conf), "--database-url",
                 f"sqlite:///{from_flag}"]) == 0
    assert from_flag.exists()
    assert str(from_flag) in capsys.readouterr().out


def test_unreachable_server_names_the_masked_url(capsys):
    url = "postgresql://vgpucloud:s3cret@127.0.0.1:1/vgpucloud"
    assert main(["db", "sync", "--database-url", url]) == 1
    err = capsys.readouterr().err
    assert "127.0.0.1:1/vgpucloud is unavailable" in err
    assert "s3cret" not in err and "***" in err
