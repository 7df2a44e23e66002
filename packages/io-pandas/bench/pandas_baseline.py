"""pandas baseline for bench.ts: records JSON -> DataFrame -> records JSON (and parquet if pyarrow exists)."""
import io
import json
import sys
import time

import pandas as pd

path, repeats = sys.argv[1], int(sys.argv[2])
text = open(path, encoding="utf-8").read()


def best(fn):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return min(times)


out = {"pandas": pd.__version__}
out["json_read_ms"] = best(lambda: pd.read_json(io.StringIO(text), orient="records"))
df = pd.read_json(io.StringIO(text), orient="records")
out["json_write_ms"] = best(lambda: df.to_json(orient="records"))
try:
    import pyarrow  # noqa: F401

    buf = io.BytesIO()
    df.to_parquet(buf)
    data = buf.getvalue()
    out["parquet_read_ms"] = best(lambda: pd.read_parquet(io.BytesIO(data)))
    out["parquet_write_ms"] = best(lambda: df.to_parquet(io.BytesIO()))
except ImportError:
    out["parquet"] = "skipped: pyarrow is not installed"
print(json.dumps(out))
