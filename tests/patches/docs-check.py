#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/system/devices/pvrdma.rst must not disagree with docs/pvrdma.txt.

The page is a short summary for QEMU's manual that points to the
sections of the text.  Checked here:
 - every line of its literal blocks (command lines) is a line of the text;
 - every section it names ('3.3 "Properties"') is a heading of the text;
 - every property it names is in the text's section 3.3 and a property
   of the device (hw/rdma/vmw/pvrdma_main.c);
 - with docutils installed, the page parses without warnings.

  docs-check.py PROJECT-DIR
Prints one line per finding and exits 1 if there is any.
"""

import os
import re
import sys

top = sys.argv[1]
rst_path = os.path.join(top, "docs/system/devices/pvrdma.rst")
rst = open(rst_path, encoding="utf-8").read()
txt = open(os.path.join(top, "docs/pvrdma.txt"), encoding="utf-8").read()
main_c = open(os.path.join(top, "hw/rdma/vmw/pvrdma_main.c"),
              encoding="utf-8").read()
txt_lines = set(line.rstrip() for line in txt.splitlines())
bad = []

# Literal blocks: the indented lines after a paragraph ending in "::".
lines = rst.splitlines()
i = 0
while i < len(lines):
    if lines[i].rstrip().endswith("::"):
        i += 1
        while i < len(lines) and (not lines[i].strip() or
                                  lines[i].startswith(" ")):
            if lines[i].strip() and lines[i].rstrip() not in txt_lines:
                bad.append("literal line not in docs/pvrdma.txt: %r"
                           % lines[i].strip())
            i += 1
    else:
        i += 1

# Section references: N[.N[.N]] "Title"
headings = set()
for m in re.finditer(r"^(\d+(?:\.\d+)*)\.? (.+)$", txt, re.M):
    headings.add((m.group(1), m.group(2).strip()))
for num, title in re.findall(r"\b(\d+(?:\.\d+)*) \"([^\"]+)\"", rst):
    if (num, title) not in headings:
        bad.append("no section %s \"%s\" in docs/pvrdma.txt" % (num, title))

# Properties
props_sec = txt[txt.index("3.3 Properties"):txt.index("3.4 rdmacm-mux(8)")]
for p in sorted(set(re.findall(r"``((?:dev-caps-[a-z-]+|max-mr-pages-total|"
                                 r"ibdev|netdev|mad-chardev|ibport))``",
                                 rst))):
    if not re.search(r"^\s+%s=" % re.escape(p), props_sec, re.M):
        bad.append("property %s is not in section 3.3 of docs/pvrdma.txt" % p)
    if '"%s"' % p not in main_c:
        bad.append("property %s is not a property of the device" % p)

try:
    import docutils.core
    import docutils.utils
except ImportError:
    docutils = None
if docutils:
    # Sphinx roles are not docutils': register :doc: and :ref: as plain
    # text so that only the page's own syntax is judged.
    from docutils.parsers.rst import roles

    def text_role(name, rawtext, text, lineno, inliner, options=None,
                  content=None):
        from docutils import nodes
        return [nodes.literal(rawtext, text)], []
    for r in ("doc", "ref"):
        roles.register_local_role(r, text_role)
    stream = __import__("io").StringIO()
    docutils.core.publish_doctree(
        rst, source_path=rst_path,
        settings_overrides={"report_level": 2, "halt_level": 5,
                            "warning_stream": stream})
    bad += ["docutils: " + line for line in stream.getvalue().splitlines()
            if line.strip()]

for b in bad:
    print(b)
print("docs-check: %s%s" % ("%d findings" % len(bad) if bad else
                            "pvrdma.rst agrees with docs/pvrdma.txt",
                            "" if docutils else
                            " (no docutils: the page was not parsed)"))
sys.exit(1 if bad else 0)
