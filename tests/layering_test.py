#!/usr/bin/env python3
"""layering_test: no library file includes a header of a higher layer.

The layers, bottom to top, and the public headers each owns are read from
src/LAYERS, the one place the rule is written (src/CMakeLists.txt reads the
same file to give each component its include path). The build already stops
an upward include of a src/ header; this test also covers the public headers
in include/opscope/, which are on every include path. It scans src/<layer>/
(library files: tests and test utilities may include anything) and
include/opscope/, prints each offending file:line with both layers, and exits 1.
It also holds the backend rule: no file outside src/device/ includes a file of
a backend (src/device/cpu/, src/device/cuda/, ...); what the layers above need
of a backend is a Device slot or a DeviceInfo field (opscope/device.h).
A layer written "layer/room" in src/LAYERS is one room of a layer built of
rooms (src/analysis/compare/, ...): the rooms are ordered like the layers, and
every file of such a layer must sit in one of its rooms.

  /usr/bin/python3 tests/layering_test.py <repository root>
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'\s*#\s*include\s*[<"]([^>"]+)[>"]')
TEST_FILE = re.compile(r'_(test|test_util|benchmark)\.(h|cc)$')


def read_layers(root):
    """Returns (order, public) from src/LAYERS: layer names bottom to top, and
    {public header file name: layer}."""
    order, public = [], {}
    with open(os.path.join(root, 'src', 'LAYERS')) as f:
        for line in f:
            m = re.match(r'([a-z_/]+):(.*)', line)
            if not m:
                continue
            order.append(m.group(1))
            for header in m.group(2).split():
                public[header] = m.group(1)
    return order, public


def library_files(root, order):
    """Yields (path relative to root, layer) for every file the rule covers."""
    for layer in order:
        for dirpath, _, names in os.walk(os.path.join(root, 'src', layer)):
            for name in sorted(names):
                if name.endswith(('.h', '.cc')) and not TEST_FILE.search(name):
                    yield os.path.relpath(os.path.join(dirpath, name), root), layer
    include_dir = os.path.join(root, 'include', 'opscope')
    for name in sorted(os.listdir(include_dir)):
        if name.endswith('.h'):
            yield os.path.join('include', 'opscope', name), None  # layer from src/LAYERS


def layer_of_header(header, rank):
    """The layer or room an include "x/y/z.h" of a src/ header belongs to:
    the longest "x/y" or "x" in the order; None for a system header."""
    parts = header.split('/')
    if len(parts) > 2 and '/'.join(parts[:2]) in rank:
        return '/'.join(parts[:2])
    if parts[0] in rank and len(parts) > 1:
        return parts[0]
    return None


def check(root):
    """Returns one line per violation; empty when the tree keeps the rule."""
    order, public = read_layers(root)
    rank = {layer: i for i, layer in enumerate(order)}
    problems = []
    device_dir = os.path.join(root, 'src', 'device')
    backends = {d for d in os.listdir(device_dir) if os.path.isdir(os.path.join(device_dir, d))} \
        if os.path.isdir(device_dir) else set()
    roomed = {layer.split('/')[0] for layer in order if '/' in layer}
    for entry in sorted(os.listdir(os.path.join(root, 'src'))):
        if not os.path.isdir(os.path.join(root, 'src', entry)) or entry in rank:
            continue
        if entry not in roomed:
            problems.append(f'src/{entry}/: a component with no layer: add it to src/LAYERS')
            continue
        # A layer built of rooms holds rooms only: a file beside them, or a
        # folder no line names, would be in no order at all.
        for name in sorted(os.listdir(os.path.join(root, 'src', entry))):
            if f'{entry}/{name}' not in rank:
                problems.append(f'src/{entry}/{name}: in no room of {entry}: move it into one, '
                                'or give its folder a line in src/LAYERS')
    for name in sorted(os.listdir(os.path.join(root, 'include', 'opscope'))):
        if name.endswith('.h') and name not in public:
            problems.append(f'include/opscope/{name}: a public header with no layer: list it in src/LAYERS')
    for path, layer in library_files(root, order):
        if layer is None:
            layer = public.get(os.path.basename(path))
            if layer is None:
                continue  # reported above
        with open(os.path.join(root, path), errors='replace') as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                top = header.split('/')[0]
                parts = header.split('/')
                # A backend's files are its own: what others need of a
                # backend is a Device slot or a DeviceInfo field (device.h).
                if (len(parts) > 2 and parts[0] == 'device' and parts[1] in backends
                        and not path.startswith(os.path.join('src', 'device', ''))):
                    problems.append(f'{path}:{number}: includes "{header}", a file of the {parts[1]} backend: '
                                    'outside src/device, ask the Device (a slot or a DeviceInfo field) instead')
                    continue
                if top == 'opscope':
                    target = public.get(header[len('opscope/'):])
                    if target is None:
                        problems.append(f'{path}:{number}: includes "{header}", which is no public header')
                        continue
                else:
                    target = layer_of_header(header, rank)
                    if target is None and top in roomed:
                        problems.append(f'{path}:{number}: includes "{header}", in no room of {top}')
                        continue
                    if target is None:
                        continue  # a system or third-party header
                if rank[target] > rank[layer]:
                    allowed = ', '.join(order[:rank[layer] + 1])
                    problems.append(f'{path}:{number}: {layer} includes "{header}" of {target}, '
                                    f'a higher layer ({layer} may use only {allowed})')
    return problems


def write_file(root, path, text):
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), 'w') as f:
        f.write(text)


def self_test():
    """The checker itself must catch an upward include, or this test proves nothing."""
    with tempfile.TemporaryDirectory() as root:
        write_file(root, 'src/LAYERS', 'core: a.h\ndevice:\nops: b.h\n')
        write_file(root, 'src/device/cpu/q.h', '#include <vector>\n')
        write_file(root, 'src/device/d.cc', '#include "device/cpu/q.h"\n')  # the device layer may use its backends
        write_file(root, 'include/opscope/a.h', '#include <string>\n')
        write_file(root, 'include/opscope/b.h', '#include "opscope/a.h"\n')
        write_file(root, 'src/ops/y.cc', '#include "core/x.h"\n#include "opscope/b.h"\n')
        write_file(root, 'src/core/x_test.cc', '#include "ops/y.h"\n')  # tests may include anything
        write_file(root, 'src/core/x.h', '#include <vector>\n')
        if check(root):
            return 'self-test: a clean tree was reported: ' + '; '.join(check(root))
        write_file(root, 'src/core/x.cc', '#include "opscope/a.h"\n#include "ops/y.h"\n')
        write_file(root, 'include/opscope/a.h', '#include "opscope/b.h"\n')
        write_file(root, 'src/ops/z.cc', '#include "device/cpu/q.h"\n')  # a backend's file from above
        found = check(root)
        want = ['src/core/x.cc:2', 'include/opscope/a.h:1', 'src/ops/z.cc:1']
        if sorted(p.split(': ')[0] for p in found) != sorted(want):
            return f'self-test: expected {want}, got {found}'
    with tempfile.TemporaryDirectory() as root:
        write_file(root, 'src/LAYERS', 'core:\nops/low: l.h\nops/high: h.h\ngraph:\n')
        write_file(root, 'include/opscope/l.h', '#include <string>\n')
        write_file(root, 'include/opscope/h.h', '#include "opscope/l.h"\n')
        write_file(root, 'src/ops/high/h.cc', '#include "ops/low/l.h"\n#include "core/c.h"\n')
        write_file(root, 'src/graph/g.cc', '#include "ops/high/h.h"\n')
        if check(root):
            return 'self-test: clean rooms were reported: ' + '; '.join(check(root))
        write_file(root, 'src/ops/low/l.cc', '#include "ops/high/h.h"\n')  # a room includes a later one
        write_file(root, 'include/opscope/l.h', '#include "opscope/h.h"\n')
        write_file(root, 'src/ops/loose.cc', '#include "core/c.h"\n')  # beside the rooms
        found = check(root)
        want = ['src/ops/low/l.cc:1', 'include/opscope/l.h:1', 'src/ops/loose.cc']
        if sorted(p.split(': ')[0] for p in found) != sorted(want):
            return f'self-test: expected {want}, got {found}'
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    failure = self_test()
    if failure:
        print(failure)
        return 1
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f'{len(problems)} layering violation(s); the layers are in src/LAYERS')
        return 1
    order, _ = read_layers(root)
    print('layering ok: ' + ' < '.join(order))
    return 0


if __name__ == '__main__':
    sys.exit(main())
