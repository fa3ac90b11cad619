# Checks an ONNX model with Debian's python3-onnx: onnx.checker with full_check (shape
# inference too), then prints its IR version, opsets, inputs, outputs and op types.
# Usage: python3 onnx-check.py MODEL
import sys

import onnx

m = onnx.load(sys.argv[1])
onnx.checker.check_model(m, full_check=True)
g = m.graph
print("ir_version", m.ir_version)
print("opset", " ".join("%s:%d" % (o.domain or "ai.onnx", o.version) for o in m.opset_import))
print("inputs", " ".join(i.name for i in g.input))
print("outputs", " ".join(o.name for o in g.output))
print("ops", " ".join(sorted({n.op_type for n in g.node})))
