"""Serving the API: ``vgpucloud api`` as a process, the gunicorn entry point, keystone auth."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import webob

from vgpucloud.api import wsgi
from vgpucloud.cli.main import main
from vgpucloud.conf import load_settings
from vgpucloud.storage import schema

ADMIN = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement latest"}


def test_api_on_a_database_without_schema_says_how_to_sync(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.sqlite'}"
    assert main(["api", "--database-url", url, "--bind", "127.0.0.1:0"]) == 1
    err = capsys.readouterr().err
    assert "has no vgpucloud schema" in err
    assert f"vgpucloud db sync --database-url {url}" in err


def test_api_with_sync_serves_a_fresh_sqlite_and_stops_on_sigterm(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.sqlite'}"
    process = subprocess.Popen(
        [sys.executable, "-m", "vgpucloud.cli.main", "api", "--sync", "--database-url", url,
         "--bind", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert "serving http://127.0.0.1:" in banner, banner
        base = banner.split("serving ")[1].split("/ ")[0]
        with urllib.request.urlopen(f"{base}/placement/", timeout=10) as response:
            assert json.load(response)["versions"][0]["max_version"] == "1.39"
        request = urllib.request.Request(f"{base}/placement/resource_providers", headers=ADMIN)
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.load(response) == {"resource_providers": []}
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert "stopped" in process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_bad_bind_is_a_config_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["api", "--bind", "localhost", "--database-url", "sqlite://"]) == 1
    assert "expected HOST:PORT" in capsys.readouterr().err


@pytest.fixture
def synced_sqlite(tmp_path: Path) -> str:
    """A migrated SQLite file: these tests are about wiring, not about the backend."""
    url = f"sqlite:///{tmp_path / 'synced.sqlite'}"
    schema.sync(url)
    return url


def test_wsgi_application_reads_the_environment(
    synced_sqlite: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(wsgi.DATABASE_URL_ENV, synced_sqlite)
    monkeypatch.delenv(wsgi.CONFIG_FILE_ENV, raising=False)
    application = wsgi.LazyApplication(
        lambda: wsgi.build_application(wsgi.settings_from_environment()))
    created = webob.Request.blank(
        "/placement/resource_providers", method="POST", headers=ADMIN,
        content_type="application/json", body=b'{"name": "gunicorn-host"}',
    ).get_response(application)
    assert created.status_int == 200, created.text
    assert created.json["name"] == "gunicorn-host"


KEYSTONE_CONF = """\
[api]
auth_strategy = keystone
[keystone_authtoken]
www_authenticate_uri = http://keystone.invalid/identity
"""


def test_keystone_strategy_guards_placement_but_not_its_version_document(
    tmp_path: Path, synced_sqlite: str
) -> None:
    config = tmp_path / "vgpucloud.conf"
    config.write_text(KEYSTONE_CONF)
    settings = load_settings(str(config), {"database_url": synced_sqlite})
    app = wsgi.build_application(settings)
    home = webob.Request.blank("/placement/").get_response(app)
    assert home.status_int == 200
    denied = webob.Request.blank("/placement/resource_providers").get_response(app)
    assert denied.status_int == 401
    assert "keystone.invalid" in denied.headers["WWW-Authenticate"]
