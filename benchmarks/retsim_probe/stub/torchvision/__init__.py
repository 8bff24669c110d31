"""Stub so onnx2torch imports without torchvision (only NMS/RoiAlign converters use it; RETSim has neither)."""
from . import ops  # noqa
