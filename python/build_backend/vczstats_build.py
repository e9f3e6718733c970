"""An in-tree PEP 517 build backend for the vczstats Python package.

It needs nothing from PyPI: it configures and builds the repository's CMake project (targets
``vczstats_python``, the extension module ``vczstats/_core``, and ``vczstats``, the CLI) and
zips the module, the pure-Python files of ``python/vczstats`` and the CLI binary
(``vczstats/bin/vczstats``, run by the ``vczstats`` console command) into a wheel. See ``pyproject.toml`` for the
``-C build-dir=...`` and ``-C cmake-args=...`` settings.
"""

from __future__ import annotations

import base64
import csv
import glob
import hashlib
import io
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)           # python/
REPO = os.path.dirname(PACKAGE_ROOT)           # the CMake project


def _project():
    """name, version, description, requires-python, dependencies, extras of pyproject.toml."""
    path = os.path.join(PACKAGE_ROOT, "pyproject.toml")
    try:
        import tomllib

        with open(path, "rb") as f:
            return tomllib.load(f)["project"]
    except ImportError:  # Python < 3.11: the few keys we write, read plainly
        text = open(path).read()
        section = text.split("[project]", 1)[1].split("\n[", 1)[0]
        project = {k: v for k, v in re.findall(r'^(\w[\w-]*) = "(.*)"$', section, re.M)}
        project["dependencies"] = re.findall(r'"([^"]+)"', re.search(
            r"^dependencies = \[(.*)\]$", section, re.M).group(1))
        return project


def _tag():
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    abi = impl + getattr(sys, "abiflags", "")
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return impl, abi, plat


def _dist_info_name(project):
    return f"{project['name']}-{project['version']}.dist-info"


def _metadata(project) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}",
             f"Version: {project['version']}", f"Summary: {project.get('description', '')}"]
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    for dep in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dep}")
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    readme = os.path.join(PACKAGE_ROOT, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + open(readme, encoding="utf-8").read()
    return "\n".join(lines) + "\n" + body


def _wheel_file() -> str:
    impl, abi, plat = _tag()
    return ("Wheel-Version: 1.0\nGenerator: vczstats_build\nRoot-Is-Purelib: false\n"
            f"Tag: {impl}-{abi}-{plat}\n")


def _log(msg: str) -> None:
    print(f"vczstats_build: {msg}", file=sys.stderr, flush=True)


def _run(cmd) -> None:
    _log(" ".join(shlex.quote(c) for c in cmd))
    subprocess.run(cmd, check=True)


def _build_dir(setting) -> str:
    """The build folder: ``build-dir`` (relative paths are taken from the repository root,
    never from python/, where pip runs the backend); else the repository's build/ when
    scripts/build.sh configured one with the Python package on (reused: only the module and
    the CLI are brought up to date); else <repo>/build-python."""
    if setting:
        path = os.path.join(REPO, os.path.expanduser(setting))  # an absolute one stays itself
        _log(f"build folder {os.path.abspath(path)} (build-dir={setting})")
        return os.path.abspath(path)
    build = os.path.join(REPO, "build")
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache):
        text = open(cache, encoding="utf-8", errors="replace").read()
        if not re.search(r"^VCZSTATS_PYTHON:BOOL=(OFF|0|FALSE|NO)$", text, re.M | re.I):
            _log(f"reusing the build of scripts/build.sh in {build} (-C build-dir=DIR for another)")
            return build
    return os.path.join(REPO, "build-python")


def _build_module(config_settings) -> str:
    """Configure (a fresh build folder only) and build the extension; returns its path."""
    settings = config_settings or {}
    if not os.path.exists(os.path.join(REPO, "CMakeLists.txt")):
        raise RuntimeError(f"{REPO} is not the vczstats repository: build from a clone")
    build = _build_dir(settings.get("build-dir"))
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        cmd = ["cmake", "-S", REPO, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
               "-DVCZSTATS_PYTHON=ON", "-DVCZSTATS_TESTS=OFF", "-DVCZSTATS_BENCH=OFF",
               f"-DPython_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            cmd += ["-G", "Ninja"]
        if shutil.which("ccache"):
            cmd += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"]
        cmd += shlex.split(settings.get("cmake-args", ""))
        _run(cmd)
    jobs = settings.get("jobs") or str(os.cpu_count() or 1)
    _run(["cmake", "--build", build, "--target", "vczstats_python", "vczstats", "-j", jobs])
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    found = glob.glob(os.path.join(build, "python", "vczstats", "_core" + suffix))
    if not found:
        found = glob.glob(os.path.join(build, "python", "vczstats", "_core*.so"))
    if not found:
        raise RuntimeError(f"the build in {build} made no vczstats/_core{suffix} (an interpreter "
                           "other than the one this build folder was configured with?)")
    return found[0]


def _cli_binary(module: str) -> str:
    """The CLI binary of the build that made @p module (<build>/python/vczstats/_core...)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(module))), "vczstats")
    if not os.path.isfile(path):
        raise RuntimeError(f"the build made no vczstats binary at {path}")
    return path


#: The console command the wheel installs: the CLI binary it carries (vczstats/_cli.py).
ENTRY_POINTS = "[console_scripts]\nvczstats = vczstats._cli:main\n"


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


# ---- PEP 517 hooks --------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = _project()
    name = _dist_info_name(project)
    os.makedirs(os.path.join(metadata_directory, name), exist_ok=True)
    with open(os.path.join(metadata_directory, name, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(project))
    with open(os.path.join(metadata_directory, name, "WHEEL"), "w") as f:
        f.write(_wheel_file())
    with open(os.path.join(metadata_directory, name, "entry_points.txt"), "w") as f:
        f.write(ENTRY_POINTS)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    module = _build_module(config_settings)
    impl, abi, plat = _tag()
    wheel_name = f"{project['name']}-{project['version']}-{impl}-{abi}-{plat}.whl"
    files = {}
    src = os.path.join(PACKAGE_ROOT, "vczstats")
    for path in sorted(glob.glob(os.path.join(src, "*.py")) + [os.path.join(src, "py.typed")]):
        with open(path, "rb") as f:
            files["vczstats/" + os.path.basename(path)] = f.read()
    with open(module, "rb") as f:
        files["vczstats/" + os.path.basename(module)] = f.read()
    with open(_cli_binary(module), "rb") as f:
        files["vczstats/bin/vczstats"] = f.read()
    info = _dist_info_name(project)
    files[f"{info}/METADATA"] = _metadata(project).encode()
    files[f"{info}/WHEEL"] = _wheel_file().encode()
    files[f"{info}/entry_points.txt"] = ENTRY_POINTS.encode()
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in files.items():
        writer.writerow([name, _record_hash(data), len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    files[f"{info}/RECORD"] = record.getvalue().encode()
    os.makedirs(wheel_directory, exist_ok=True)
    path = os.path.join(wheel_directory, wheel_name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            info_ = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            executable = name.endswith(".so") or name == "vczstats/bin/vczstats"
            # a regular file's type bits too: pip marks a file executable only when its mode
            # says it is a regular file with an x bit (else the vczstats command cannot run it)
            info_.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
            info_.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info_, data)
    _log(f"wrote {path}")
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("vczstats builds from a clone of its repository (the CMake project "
                       "around python/); an sdist of python/ alone could not be built")
