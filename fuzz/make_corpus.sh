#!/usr/bin/env bash
# Writes the seed corpus of every fuzz target into OUT/<target>/ (default
# build-asan/fuzz/corpus/): copies of the example models, .npy files and golden
# JSON, arrays numpy writes now, and a few HTTP requests. Nothing binary is
# committed: the seeds are made at fuzz time from what the repository holds.
# A seed of a target whose first byte picks a mode starts with that byte.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-asan/fuzz/corpus}
rm -rf "$out"
mkdir -p "$out"/{npy,npz,onnx,attrs,flag_parsing,session,capture,report_dir,http}

# .npy: every one in the repository, and the dtypes, orders and header versions numpy writes.
find examples tests -name '*.npy' -not -path '*/node_modules/*' -exec cp {} "$out/npy/" \;
/usr/bin/python3 - "$out" <<'PY'
import io, sys, zipfile
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(0)
arrays = {
    "f32": rng.standard_normal((2, 3)).astype(np.float32),
    "f16": np.arange(6, dtype=np.float16).reshape(3, 2),
    "f64_big": np.arange(4, dtype=">f8"),
    "i64": np.arange(5, dtype=np.int64),
    "u8": np.arange(7, dtype=np.uint8),
    "bool": np.array([True, False, True]),
    "scalar": np.float32(3.5),
    "empty": np.zeros((0, 4), np.float32),
    "fortran": np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
}
for name, a in arrays.items():
    np.save(f"{out}/npy/{name}.npy", a)
# A version 2.0 header (numpy writes it for headers past 65535 bytes; forced here).
buf = io.BytesIO()
np.lib.format.write_array(buf, arrays["f32"], version=(2, 0))
open(f"{out}/npy/v2.npy", "wb").write(buf.getvalue())
np.savez(f"{out}/npz/stored.npz", **{k: arrays[k] for k in ("f32", "i64", "bool")})
np.savez_compressed(f"{out}/npz/deflated.npz", **{k: arrays[k] for k in ("f16", "u8", "empty")})
PY

cp examples/models/*.onnx "$out/onnx/"

# The first byte picks the op by its index in the registry's sorted names:
# 0..31 reach the first ops; the texts are the forms the schemas declare.
i=0
for attrs in 'eps=1e-6,axis=-1' 'kernel_shape=[3,3],strides=[1,1],pads=[0,0,0,0]' 'alpha=0.5' \
             'mode=linear' 'axis=1' 'perm=[1,0]' 'keepdims=0,axes=[1]' 'group=2,dilations=[1,1]'; do
  for op in $(seq $((i % 4)) 4 60); do
    printf "\\x$(printf %02x "$op")%s" "$attrs" >"$out/attrs/$i-$op"
  done
  i=$((i + 1))
done

printf '\x00%s' '[4,256,64];[64]' >"$out/flag_parsing/shapes"
printf '\x00%s' '[];[1]' >"$out/flag_parsing/scalar"
printf '\x01%s' 'float32,float16' >"$out/flag_parsing/dtypes"
printf '\x02%s' 'block=256,vec=4' >"$out/flag_parsing/tunables"
printf '\x03%s' '31.5' >"$out/flag_parsing/number"

printf '\x00%s' '{"schema": "opscope.session/1", "collectors": {"graph": true, "runtime": false}}' \
  >"$out/session/session"
printf '\x01%s' '{"schema": "opscope.session-runtime/1", "pid": 1, "dropped": 0, "launches": []}' \
  >"$out/session/runtime"
printf '\x02%s' '{"schema": "opscope.session-graph/1", "pid": 1, "graphs_collected": 1}' >"$out/session/graph"
# A graph record holding a whole graph in graph.json's columns (the golden
# const_if run's), so the fuzzer starts inside graph::ExpandGraphJson's reader.
/usr/bin/python3 - "$out/session/graph-columns" <<'PY'
import json, sys
graph = json.load(open("tests/golden/const_if.graph.json"))
record = {"schema": "opscope.session-graph/1", "pid": 1, "framework_known": True,
          "streams": ["compute 0", "copy"], "num_events": 0, "tasks": [], "graph": graph}
open(sys.argv[1], "wb").write(b"\x02" + json.dumps(record).encode())
PY

# capture.json of real runs, when a build of inspector-cli is there to make them.
cli=""
for c in build/bin/inspector-cli build-asan/bin/inspector-cli; do [ -x "$c" ] && { cli=$c; break; }; done
if [ -n "$cli" ]; then
  tmp=$(mktemp -d)
  for model in two_branch const_if; do
    if ASAN_OPTIONS=detect_leaks=0 "$cli" run "examples/models/$model.onnx" --output-dir "$tmp/$model" \
        >/dev/null 2>&1; then
      cp "$tmp/$model/capture.json" "$out/capture/$model.json"
    fi
  done
  rm -rf "$tmp"
fi
[ -n "$(ls "$out/capture")" ] || echo "make_corpus: no inspector-cli built: capture/ starts from {}" >&2
[ -n "$(ls "$out/capture")" ] || echo '{"schema": "opscope.capture/1"}' >"$out/capture/min.json"

# report_dir: byte 0..4 = graph.json, trace.json, summary.json, roofline.svg, diagnosis.json.
n=0
for f in graph trace summary; do
  for g in tests/golden/*."$f".json; do
    { printf "\\x0$n"; cat "$g"; } >"$out/report_dir/$n-$(basename "$g")"
  done
  n=$((n + 1))
done
printf '\x03%s' '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect x="1" y="1" width="4" height="4"/><text x="2" y="8">peak</text></svg>' \
  >"$out/report_dir/3-svg"
printf '\x04%s' '{"schema": "opscope.diagnosis/1", "status": "crashed", "trajectory": []}' >"$out/report_dir/4-diag"

h=0
for req in 'GET / HTTP/1.1\r\nHost: 127.0.0.1:8765\r\n\r\n' \
           'GET /graph.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' \
           'GET /files.json HTTP/1.1\r\nHost: [::1]:8765\r\n\r\n' \
           'GET /roofline.svg HTTP/1.0\r\n\r\n' \
           'GET /app.js?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' \
           'GET /../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' \
           'POST /summary.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n' \
           'GET /trace.json HTTP/1.1\r\nHost: evil.example\r\n\r\n'; do
  printf "$req" >"$out/http/req$h"
  h=$((h + 1))
done
echo "make_corpus: seeds in $out: $(find "$out" -type f | wc -l) files"
