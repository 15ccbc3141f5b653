#!/usr/bin/env python3
# Rewrites the golden table of tests/test_goldens.c from `build/lockstep sim`
# (each shipped scene for its own tick count) and prints it for the CHANGELOG.
# Run from the repository root after `make`; changing goldens is deliberate.
import glob
import os
import re
import subprocess
import sys

TOOL = os.environ.get("LOCKSTEP", "build/lockstep")
TEST = "tests/test_goldens.c"

rows = []
for path in sorted(glob.glob("tools/scenes/*.scene")):
    name = os.path.basename(path)[:-len(".scene")]
    out = subprocess.run([TOOL, "sim", path], check=True, capture_output=True, text=True).stdout
    checksum = re.search(r"final checksum ([0-9a-f]{16})", out).group(1)
    rows.append((name, checksum))
    print("%s %s" % (name, checksum))

table = "".join('    {"%s", 0x%sull},\n' % r for r in rows)
src = open(TEST).read()
new, n = re.subn(r"(static golden goldens\[\] = \{\n)(.*?)(\};)", lambda m: m.group(1) + table + m.group(3),
                 src, flags=re.S)
if n != 1:
    sys.exit("golden table not found in " + TEST)
open(TEST, "w").write(new)
