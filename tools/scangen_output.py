"""What `scangen run` prints, and the manifests of samples/ (samples/README.md), for the scripts
that compute samples' expected outputs with NumPy (decode_samples.py, selection_sample.py)."""
import json
import math
import re

import numpy as np


def show(value, f32=True):
    """A value as `scangen run` prints it: %.9g for f32 (%.17g for f64), whole floats as integers,
    negative zero as -0.0, non-finite values as NaN, Infinity, -Infinity; no spaces."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(show(v, f32) for v in value) + "]"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (np.floating, float)):
        x = float(value)
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        if x == 0 and math.copysign(1, x) < 0:
            return "-0.0"
        return ("%.9g" if f32 else "%.17g") % x
    return str(int(value))


def arg(name, value):
    """NAME=VALUE for `scangen run`: non-finite floats as JSON strings ("NaN"), negative zeros as
    -0.0 (a JSON -0 is the integer 0)."""
    text = show(value)
    text = re.sub(r"(?<![\d.])-0(?![\d.])", "-0.0", text)
    return "%s=%s" % (name, text.replace("NaN", '"NaN"').replace("-Infinity", '"-Infinity"')
                      .replace("Infinity", '"Infinity"').replace('"-"Infinity""', '"-Infinity"'))


def write_manifest(path, description, runs):
    """A NAME.runs.json manifest, one run per line."""
    lines = ["{", '  "description": %s,' % json.dumps(description), '  "runs": [']
    lines.append(",\n".join("    " + json.dumps(run, separators=(", ", ": ")) for run in runs))
    lines += ["  ]", "}"]
    path.write_text("\n".join(lines) + "\n")
