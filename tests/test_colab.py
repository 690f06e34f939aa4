"""gpuperf.colab: the Triton that Colab's CPU runtime gets, and the record of Colab's runtimes."""

from __future__ import annotations

import importlib.metadata
import subprocess

import pytest

from gpuperf import colab


def test_the_recorded_gpu_runtime_pairs_its_torch_with_its_triton():
    """The table agrees with Colab's own GPU image (torch 2.11.0+cu128 beside triton 3.6.0)."""
    gpu = colab.recorded_runtimes()["runtimes"]["gpu"]["packages"]
    assert colab.triton_for_torch(gpu["torch"]) == gpu["triton"]


def test_the_record_names_its_source_and_the_cpu_runtime_has_no_triton():
    record = colab.recorded_runtimes()
    assert record["source"]["repository"] == "https://github.com/googlecolab/backend-info"
    assert len(record["source"]["commit"]) == 40
    cpu = record["runtimes"]["cpu"]
    assert cpu["packages"]["triton"] is None and cpu["packages"]["torch"].endswith("+cpu")
    assert cpu["python"].startswith("3.")
    record["runtimes"]["cpu"]["python"] = "changed"
    assert colab.recorded_runtimes()["runtimes"]["cpu"]["python"] != "changed", "a copy"


@pytest.mark.parametrize(
    ("torch_version", "triton"),
    [("2.11.0+cpu", "3.6.0"), ("2.11.0", "3.6.0"), ("2.7.1+cu126", "3.3.1"), ("2.9.0", "3.5.0")],
)
def test_local_build_tags_are_ignored(torch_version, triton):
    assert colab.triton_for_torch(torch_version) == triton


@pytest.mark.parametrize("bad", ["", "two", None, 2.11, "2.11"])
def test_a_torch_version_must_look_like_one(bad):
    with pytest.raises(ValueError, match=r"torch_version=.* must be a torch version"):
        colab.triton_for_torch(bad)


def test_an_unknown_release_is_looked_up_and_failure_is_named(monkeypatch):
    monkeypatch.setattr(colab, "_triton_from_pypi", lambda release: "9.9.9")
    assert colab.triton_for_torch("3.0.0+cpu") == "9.9.9"

    def offline(release):
        raise OSError("no network")

    monkeypatch.setattr(colab, "_triton_from_pypi", offline)
    with pytest.raises(LookupError, match=r"torch 3\.0\.0 .*no network.*triton==VERSION"):
        colab.triton_for_torch("3.0.0")


def _fake_environment(monkeypatch, installed: dict[str, str]):
    calls = []

    def version(name):
        if name in installed:
            return installed[name]
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.setattr(subprocess, "run", lambda command, check: calls.append(command))
    monkeypatch.setattr(colab.sys, "platform", "linux")
    monkeypatch.delenv(colab.TORCH_STANDS_FOR_ENV, raising=False)
    return calls


def test_install_triton_installs_torchs_pair_and_nothing_else(monkeypatch, capsys):
    calls = _fake_environment(monkeypatch, {"torch": "2.11.0+cpu"})
    assert colab.install_triton() == "3.6.0"
    [command] = calls
    assert command[1:] == ["-m", "pip", "install", "-q", "--no-deps", "triton==3.6.0"]
    assert (
        "Installed Triton 3.6.0, the version torch 2.11.0 pairs with." in capsys.readouterr().out
    )


def test_a_torch_standing_in_for_colabs_gets_the_triton_of_the_release_it_stands_for(
    monkeypatch, capsys
):
    """The Colab replica's torch (2.13.0+cpu here) stands in for Colab's 2.11.0+cpu: the Triton
    asked for is 2.11's, and the message says which torch stood in for which."""
    calls = _fake_environment(monkeypatch, {"torch": "2.13.0+cpu"})
    monkeypatch.setenv(colab.TORCH_STANDS_FOR_ENV, "2.11.0+cpu")
    assert colab.install_triton() == "3.6.0"
    [command] = calls
    assert command[-1] == "triton==3.6.0"
    out = capsys.readouterr().out
    assert "Installed Triton 3.6.0, the version torch 2.11.0 pairs with." in out
    assert "torch 2.13.0+cpu is installed, standing in for 2.11.0+cpu" in out
    monkeypatch.delenv(colab.TORCH_STANDS_FOR_ENV)
    calls.clear()
    assert colab.install_triton() == "3.7.1"  # without it: the installed torch's own pair
    assert calls[0][-1] == "triton==3.7.1"


def test_install_triton_keeps_a_triton_that_is_there(monkeypatch):
    """Colab's GPU runtime: never a second Triton beside torch's."""
    calls = _fake_environment(monkeypatch, {"torch": "2.11.0+cu128", "triton": "3.6.0"})
    assert colab.install_triton() is None
    assert calls == []


def test_install_triton_explains_what_it_cannot_do(monkeypatch):
    _fake_environment(monkeypatch, {})
    with pytest.raises(RuntimeError, match="torch is not installed"):
        colab.install_triton()
    _fake_environment(monkeypatch, {"torch": "2.11.0"})
    monkeypatch.setattr(colab.sys, "platform", "darwin")
    with pytest.raises(RuntimeError, match="Linux only, not for 'darwin'"):
        colab.install_triton()
