#!/usr/bin/python3
"""Two tiny models whose names are attacks on the page that shows them
(tests/web/hostile_page_test.mjs): markup that runs script when written as
HTML (an <img> with onerror, an <svg> with onload, a </script> that would end
an inline script, a <style> that would hide the page), a javascript: URL and
the line separators U+2028/U+2029 (which end a JavaScript string literal in
older engines). Node names carry them, and so does each name's first '/'
segment, the scope the graph legend lists. Every script payload sets
window.pwned, which the test asserts is never set.

    /usr/bin/python3 tests/web/models/make_hostile_model.py OUT_DIR

hostile.onnx       Relu -> Neg -> Relu -> Neg -> Relu over x[1,8]
hostile_base.onnx  the same chain under other hostile names, the baseline
                   whose nodes a diff lists as removed
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

IMG = '<img src=x onerror=pwned=1>'
SVG = '"><svg onload=pwned=2>'
SCRIPT = '</script><script>pwned=3</script>'
STYLE = '<style>body{display:none}</style>'
JS_URL = 'javascript:pwned=4'
SEPARATORS = 'line\u2028sep\u2029para'

# First segments (the legend's scopes) without '/', so each stays one scope.
SCOPES = [IMG, SVG, JS_URL, SEPARATORS]


def save(path, prefix):
    names = [f'/{scope}/{prefix}{i}' for i, scope in enumerate(SCOPES)] + [f'{prefix}{SCRIPT}{STYLE}']
    ops = ['Relu', 'Neg'] * 2 + ['Relu']
    x = f'x{SVG}'
    tensors = [x] + [f'{n}{IMG}' for n in names]
    nodes = [helper.make_node(op, [tensors[i]], [tensors[i + 1]], name=name) for i, (op, name) in enumerate(zip(ops, names))]
    graph = helper.make_graph(nodes, f'{SCRIPT}{IMG}', [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info(tensors[-1], TensorProto.FLOAT, [1, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)], producer_name=IMG)
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == '__main__':
    out = sys.argv[1] if len(sys.argv) > 1 else '.'
    os.makedirs(out, exist_ok=True)
    save(os.path.join(out, 'hostile.onnx'), 'r')
    save(os.path.join(out, 'hostile_base.onnx'), 'base')
