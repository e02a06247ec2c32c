"""``python -m llama_cpp.server`` with llama.cpp's extra CPU buffer types switched off.

Why: on this machine's CPU (AMX advertised, in a VM) llama.cpp's AMX matrix multiply
segfaults on the first generated token (gdb: ``ggml_backend_amx_mul_mat``; every
completion, any model). The model parameters have ``use_extra_bufts`` for exactly this,
but llama-cpp-python 0.3.36's server has no setting for it, so this wrapper sets it in
the defaults the server's ``Llama`` reads, then runs the stock server unchanged.
"""

from __future__ import annotations

import runpy
from typing import Any

import llama_cpp.llama_cpp as low  # the module Llama reads its defaults from

_defaults = low.llama_model_default_params


def _without_extra_buffers() -> Any:
    params = _defaults()
    params.use_extra_bufts = False
    return params


low.llama_model_default_params = _without_extra_buffers
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
