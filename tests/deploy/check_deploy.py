#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""deploy/ checked without a cluster or a container runtime (issue 30).

Neither exists where this project is built, so the image is never built and
the manifests are never applied here. Instead this reads them:

- deploy/gameserver.yaml and deploy/fleet.yaml: the fields the Agones
  GameServer and Fleet schemas (agones.dev/v1) require, and what the relay
  needs of them: UDP container ports with a port policy, health settings that
  the relay's 2 s Health pings satisfy, containers with an image and resource
  requests and limits, no AGONES_SDK_HTTP_PORT of our own (Agones injects
  it), args the relay accepts (its --help) binding the container port and
  ending with the last match (--exit-when-done) on one worker (--workers 1:
  the GameServer forwards one UDP port); the Fleet's template is the
  GameServer's spec.
- deploy/Dockerfile: a Debian bookworm builder that runs the commands CI runs
  (.ci/run: `make deps`, then `make`, with WERROR=1), a bookworm-slim runtime
  that installs exactly the Debian packages of the shared libraries
  build/lockstep needs (its ELF NEEDED entries, through dpkg -S), the exposed
  UDP port and the relay's arguments as in the manifests.

Then it breaks copies of the documents on purpose (a TCP port, no resources,
...) and checks that each break is caught, so a check that silently passes
everything fails here.

Usage: check_deploy.py [path/to/lockstep]   (from the repository root)
"""
import copy
import json
import os
import re
import shlex
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("check_deploy: PyYAML is missing (the Debian package python3-yaml; `make deps` installs it)")
    sys.exit(1)

PORT_POLICIES = {"Dynamic", "Static", "Passthrough", "None"}


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def health_ms():
    m = re.search(r"#define AGONES_HEALTH_MS (\d+)u", read("tools/agones.h"))
    return int(m.group(1)) if m else None


def cpu_millis(q):
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def mem_bytes(q):
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 10**3, "M": 10**6, "G": 10**9}
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|K|M|G)?", str(q))
    if not m:
        raise ValueError(q)
    return int(m.group(1)) * units.get(m.group(2) or "", 1)


def check_gameserver_spec(spec, where, relay_help, errors):
    """The GameServerSpec of a GameServer or of a Fleet's template."""
    def err(msg):
        errors.append(f"{where}: {msg}")

    if not isinstance(spec, dict):
        return err("spec is not a mapping")
    ports = spec.get("ports")
    udp_ports = set()
    if not isinstance(ports, list) or not ports:
        err("spec.ports: a non-empty list is required")
        ports = []
    for i, p in enumerate(ports):
        if not isinstance(p, dict):
            err(f"spec.ports[{i}] is not a mapping")
            continue
        if not isinstance(p.get("name"), str) or not p["name"]:
            err(f"spec.ports[{i}].name is required")
        cp = p.get("containerPort")
        if not isinstance(cp, int) or not 1 <= cp <= 65535:
            err(f"spec.ports[{i}].containerPort must be a port 1..65535, got {cp!r}")
        if p.get("protocol") != "UDP":
            err(f"spec.ports[{i}].protocol must be UDP (the relay speaks UDP), got {p.get('protocol')!r}")
        elif isinstance(cp, int):
            udp_ports.add(cp)
        if p.get("portPolicy") not in PORT_POLICIES:
            err(f"spec.ports[{i}].portPolicy must be one of {sorted(PORT_POLICIES)}, got {p.get('portPolicy')!r}")
        if p.get("portPolicy") == "Static" and not isinstance(p.get("hostPort"), int):
            err(f"spec.ports[{i}]: portPolicy Static needs a hostPort")
    h = spec.get("health")
    if not isinstance(h, dict):
        err("spec.health: required (the relay sends Health; Agones must check it)")
    else:
        if h.get("disabled") is not False:
            err("spec.health.disabled must be false")
        for key, low in (("initialDelaySeconds", 0), ("periodSeconds", 1), ("failureThreshold", 1)):
            if not isinstance(h.get(key), int) or h[key] < low:
                err(f"spec.health.{key} must be an integer >= {low}, got {h.get(key)!r}")
        ms = health_ms()
        if ms is None:
            err("tools/agones.h: AGONES_HEALTH_MS not found")
        elif isinstance(h.get("periodSeconds"), int) and h["periodSeconds"] * 1000 <= ms:
            err(f"spec.health.periodSeconds ({h['periodSeconds']} s) must exceed the relay's ping period ({ms} ms)")
    pod = spec.get("template", {}).get("spec", {}) if isinstance(spec.get("template"), dict) else {}
    containers = pod.get("containers") if isinstance(pod, dict) else None
    if not isinstance(containers, list) or not containers:
        return err("spec.template.spec.containers: a non-empty list is required")
    if len(containers) > 1 and spec.get("container") not in [c.get("name") for c in containers]:
        err("spec.container must name the game server container when the pod has several")
    for i, c in enumerate(containers):
        w = f"spec.template.spec.containers[{i}]"
        if not isinstance(c, dict):
            err(f"{w} is not a mapping")
            continue
        if not isinstance(c.get("name"), str) or not c["name"]:
            err(f"{w}.name is required")
        if not isinstance(c.get("image"), str) or not c["image"]:
            err(f"{w}.image is required")
        res = c.get("resources")
        if not isinstance(res, dict):
            err(f"{w}.resources: requests and limits are required")
        else:
            try:
                req, lim = res["requests"], res["limits"]
                if cpu_millis(req["cpu"]) > cpu_millis(lim["cpu"]):
                    err(f"{w}.resources: the cpu request exceeds the limit")
                if mem_bytes(req["memory"]) > mem_bytes(lim["memory"]):
                    err(f"{w}.resources: the memory request exceeds the limit")
            except (KeyError, TypeError, ValueError) as e:
                err(f"{w}.resources: requests and limits need cpu and memory ({e!r})")
        for e in c.get("env") or []:
            if isinstance(e, dict) and e.get("name", "").startswith("AGONES_SDK_"):
                err(f"{w}.env sets {e['name']}: Agones injects it")
        args = c.get("args")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            err(f"{w}.args: a list of strings (the relay's options) is required")
            continue
        if "--exit-when-done" not in args:
            err(f"{w}.args: --exit-when-done is needed (Shutdown after the last match)")
        if "--bind" not in args or args.index("--bind") + 1 >= len(args):
            err(f"{w}.args: --bind 0.0.0.0:PORT is needed")
        else:
            bind = args[args.index("--bind") + 1]
            host, _, port = bind.rpartition(":")
            if host != "0.0.0.0" or not port.isdigit() or int(port) not in udp_ports:
                err(f"{w}.args: --bind {bind} must be 0.0.0.0 and a UDP containerPort {sorted(udp_ports)}")
        if "--workers" not in args or args[args.index("--workers") + 1:][:1] != ["1"]:
            err(f"{w}.args: --workers 1 is needed (each relay worker binds its own UDP port; "
                "the GameServer forwards one)")
        if relay_help is not None:
            for a in args:
                if a.startswith("--") and a not in relay_help:
                    err(f"{w}.args: `lockstep relay --help` does not know {a}")


def dockerfile_instructions(text):
    """(INSTRUCTION, arguments) with continuations joined and comments dropped."""
    out, cur = [], ""
    for line in text.splitlines():
        s = line.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        if s.startswith("#"):
            continue
        cur += (" " if cur else "") + s.rstrip("\\").strip()
        if not s.endswith("\\"):
            word, _, rest = cur.partition(" ")
            out.append((word.upper(), rest.strip()))
            cur = ""
    return out


def make_goals(command):
    """The goals of a `make ...` command (options and VAR=value dropped), or None."""
    words = shlex.split(command)
    if not words or words[0] != "make":
        return None
    goals, skip = [], False
    for w in words[1:]:
        if skip:
            skip = False
        elif w in ("-j", "-C", "-f"):
            skip = True
        elif w.startswith("-") or "=" in w:
            continue
        else:
            goals.append(w)
    return goals


# Loaded with dlopen by a NEEDED library: libwebsockets' libuv event library
# (`lockstep relay --ws`, SPEC.md §17.16).
RUNTIME_PLUGINS = {"libwebsockets-evlib-uv"}


def needed_packages(tool):
    """Debian packages of the tool's NEEDED shared libraries (libc6 aside), or None."""
    try:
        dyn = subprocess.run(["readelf", "-d", tool], capture_output=True, text=True, check=True).stdout
        libs = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
        paths = subprocess.run(["ldd", tool], capture_output=True, text=True, check=True).stdout
        where = dict(re.findall(r"^\s*(\S+) => (\S+)", paths, re.M))
        # One dpkg -S for all (it reads the whole database each time); a library
        # is known under its resolved path (usr-merge) or the path ldd gives.
        paths = [os.path.realpath(where[lib]) for lib in libs] + [where[lib] for lib in libs]
        owners = subprocess.run(["dpkg", "-S"] + paths, capture_output=True, text=True).stdout
        owner_of = {line.split(": ", 1)[1]: line.split(":")[0] for line in owners.splitlines() if ": " in line}
        pkgs = set()
        for lib in libs:
            pkgs.add(owner_of.get(os.path.realpath(where[lib])) or owner_of[where[lib]])
        return pkgs - {"libc6"}
    except (OSError, subprocess.CalledProcessError, KeyError):
        return None


def check_dockerfile(text, ci, container_args, udp_ports, runtime_pkgs, errors):
    def err(msg):
        errors.append(f"deploy/Dockerfile: {msg}")

    ins = dockerfile_instructions(text)
    stages, cur = [], None
    for word, rest in ins:
        if word == "FROM":
            cur = {"from": rest, "ins": []}
            stages.append(cur)
        elif cur is not None:
            cur["ins"].append((word, rest))
    if len(stages) != 2:
        return err(f"two stages expected (builder, runtime), found {len(stages)}")
    build, run = stages
    if not re.fullmatch(r"debian:bookworm(\S*)? [Aa][Ss] \S+", build["from"]):
        err(f"the builder must be FROM debian:bookworm AS <name>, got {build['from']!r}")
    if not re.fullmatch(r"debian:bookworm(-slim)?", run["from"]):
        err(f"the runtime must be FROM debian:bookworm(-slim), got {run['from']!r}")
    # The builder's make commands are CI's: `make deps`, then `make` (the default goal).
    makes = []
    for word, rest in build["ins"]:
        if word == "RUN":
            for cmd in rest.split("&&"):
                g = make_goals(cmd.strip())
                if g is not None:
                    makes.append(g)
    if makes != [["deps"], []]:
        err(f"the builder must run `make deps` then `make` as CI does, runs {makes}")
    ci_makes = [make_goals(l.strip()) for l in ci.splitlines() if l.strip().startswith("make ")]
    if ["deps"] not in ci_makes or ci_makes.index(["deps"]) != 0:
        err(".ci/run no longer starts with `make deps`: keep the two in step")
    if re.search(r"^export WERROR=1$", ci, re.M) and ("ENV", "WERROR=1") not in build["ins"]:
        err("CI builds with WERROR=1 (.ci/run): the builder must too (ENV WERROR=1)")
    # The runtime installs exactly the tool's shared libraries' packages, and the
    # plugins a library loads at run time (no NEEDED entry names them).
    installed = set()
    for word, rest in run["ins"]:
        if word == "RUN":
            for cmd in rest.split("&&"):
                w = shlex.split(cmd)
                if w[:2] == ["apt-get", "install"]:
                    installed |= {x for x in w[2:] if not x.startswith("-")}
    if runtime_pkgs is not None and installed != runtime_pkgs | RUNTIME_PLUGINS:
        err(f"the runtime installs {sorted(installed)}, build/lockstep needs "
            f"{sorted(runtime_pkgs | RUNTIME_PLUGINS)}")
    if not any(w == "COPY" and r.startswith("--from=") and r.split()[1].endswith("/build/lockstep")
               for w, r in run["ins"]):
        err("the runtime must COPY --from=<builder> .../build/lockstep")
    exposed = {r for w, rest in run["ins"] if w == "EXPOSE" for r in rest.split()}
    for p in udp_ports:
        if f"{p}/udp" not in exposed:
            err(f"EXPOSE {p}/udp missing (the manifests' containerPort)")
    entry = [json.loads(r) for w, r in run["ins"] if w == "ENTRYPOINT"]
    cmd = [json.loads(r) for w, r in run["ins"] if w == "CMD"]
    if not entry or entry[-1][-1:] != ["relay"] or not entry[-1][0].endswith("lockstep"):
        err("ENTRYPOINT must be [\".../lockstep\", \"relay\"]")
    if not cmd or cmd[-1] != container_args:
        err(f"CMD {cmd[-1] if cmd else None} differs from the manifests' args {container_args}")


def check_all(gs, fleet, dockerfile, ci, relay_help, runtime_pkgs):
    errors = []
    if gs.get("apiVersion") != "agones.dev/v1" or gs.get("kind") != "GameServer":
        errors.append("deploy/gameserver.yaml: apiVersion agones.dev/v1, kind GameServer required")
    md = gs.get("metadata") or {}
    if not (md.get("name") or md.get("generateName")):
        errors.append("deploy/gameserver.yaml: metadata.name or generateName required")
    check_gameserver_spec(gs.get("spec"), "deploy/gameserver.yaml", relay_help, errors)
    if fleet.get("apiVersion") != "agones.dev/v1" or fleet.get("kind") != "Fleet":
        errors.append("deploy/fleet.yaml: apiVersion agones.dev/v1, kind Fleet required")
    if not (fleet.get("metadata") or {}).get("name"):
        errors.append("deploy/fleet.yaml: metadata.name required")
    fs = fleet.get("spec") or {}
    if not isinstance(fs.get("replicas"), int) or fs["replicas"] < 0:
        errors.append("deploy/fleet.yaml: spec.replicas must be an integer >= 0")
    tmpl = fs.get("template") or {}
    check_gameserver_spec(tmpl.get("spec"), "deploy/fleet.yaml template", relay_help, errors)
    if tmpl.get("spec") != gs.get("spec"):
        errors.append("deploy/fleet.yaml: spec.template.spec differs from deploy/gameserver.yaml's spec")
    try:
        args = gs["spec"]["template"]["spec"]["containers"][0]["args"]
        udp = {p["containerPort"] for p in gs["spec"]["ports"] if p.get("protocol") == "UDP"}
    except (KeyError, IndexError, TypeError):
        args, udp = None, set()
    check_dockerfile(dockerfile, ci, args, udp, runtime_pkgs, errors)
    return errors


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 else "build/lockstep"
    gs = yaml.safe_load(read("deploy/gameserver.yaml"))
    fleet = yaml.safe_load(read("deploy/fleet.yaml"))
    dockerfile, ci = read("deploy/Dockerfile"), read(".ci/run")
    relay_help, runtime_pkgs, notes = None, None, []
    if os.access(tool, os.X_OK):
        relay_help = subprocess.run([tool, "relay", "--help"], capture_output=True, text=True).stdout
        runtime_pkgs = needed_packages(tool)
    if relay_help is None:
        notes.append(f"{tool} not built: the args were not checked against `relay --help`")
    if runtime_pkgs is None:
        notes.append("readelf/ldd/dpkg unavailable: the runtime packages were not checked")
    errors = check_all(gs, fleet, dockerfile, ci, relay_help, runtime_pkgs)
    # Each deliberate break must be caught.
    def broken(edit):
        g, f, d = copy.deepcopy(gs), copy.deepcopy(fleet), dockerfile
        g, f, d = edit(g, f, d)
        return check_all(g, f, d, ci, relay_help, runtime_pkgs)

    def container(g):
        return g["spec"]["template"]["spec"]["containers"][0]

    def tcp(g, f, d):
        g["spec"]["ports"][0]["protocol"] = "TCP"
        return g, f, d

    def no_policy(g, f, d):
        del f["spec"]["template"]["spec"]["ports"][0]["portPolicy"]
        return g, f, d

    def no_health(g, f, d):
        del g["spec"]["health"]
        return g, f, d

    def no_resources(g, f, d):
        del container(g)["resources"]
        return g, f, d

    def no_image(g, f, d):
        del container(f["spec"]["template"])["image"]
        return g, f, d

    def agones_env(g, f, d):
        container(g)["env"] = [{"name": "AGONES_SDK_HTTP_PORT", "value": "9358"}]
        return g, f, d

    def another_kind(g, f, d):
        f["kind"] = "GameServerSet"
        return g, f, d

    def other_build(g, f, d):
        return g, f, d.replace("RUN make -j2\n", "RUN make -j2 build/lockstep\n")

    def two_workers(g, f, d):
        args = container(f["spec"]["template"])["args"]
        args[args.index("--workers") + 1] = "2"
        return g, f, d

    def missing_library(g, f, d):
        return g, f, d.replace(" libsodium23", "")

    breaks = {"a TCP port": tcp, "no port policy": no_policy, "no health": no_health,
              "no resources": no_resources, "no image": no_image, "AGONES env set": agones_env,
              "another kind": another_kind, "a build step CI does not run": other_build,
              "two workers behind one port": two_workers}
    if runtime_pkgs is not None:
        breaks["a missing runtime library"] = missing_library
    caught = 0
    for name, edit in breaks.items():
        if broken(edit) == errors:
            errors.append(f"self-check: {name} went unnoticed")
        else:
            caught += 1
    for n in notes:
        print(f"deploy: note: {n}")
    for e in errors:
        print(f"deploy: {e}")
    if errors:
        print(f"deploy: {len(errors)} problem(s)")
        return 1
    print(f"deploy: Fleet, GameServer and Dockerfile checked; {caught} deliberate breaks caught")
    return 0


if __name__ == "__main__":
    sys.exit(main())
