#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
#
# Write placeholder NuGet packages for the emscripten workload packs that
# the SDK's manifest names (Microsoft.NET.Runtime.Emscripten.*.linux-x64),
# at the version it pins.  The NuGet feed does not serve the real ones; each
# placeholder holds only an Sdk.props that points MSBuild at an emscripten
# already installed, laid out like an emsdk:
#
#   stub-packs.py DOTNET_ROOT EMSDK EMCACHE OUTDIR
#
# EMSDK has bin/ (clang, wasm-ld, ...), emscripten/ (emcc) and node/bin/node;
# EMCACHE is a writable emscripten cache.  Paths are as the build sees them.

import glob
import json
import os
import sys
import zipfile

RID = "linux-x64"

NUSPEC = """<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd">
  <metadata>
    <id>{id}</id>
    <version>{version}</version>
    <authors>dsroute tests</authors>
    <description>Placeholder: the emscripten installed at {emsdk}.</description>
  </metadata>
</package>
"""

# What each kind of pack tells MSBuild, by the word after "Emscripten.N.N.N.".
PROPS = {
    "Sdk": """  <PropertyGroup>
    <EmscriptenSdkToolsPath>{emsdk}/</EmscriptenSdkToolsPath>
    <EmscriptenUpstreamBinPath>{emsdk}/bin/</EmscriptenUpstreamBinPath>
    <EmscriptenUpstreamEmscriptenPath>{emsdk}/emscripten/</EmscriptenUpstreamEmscriptenPath>
  </PropertyGroup>
  <ItemGroup>
    <EmscriptenPrependPATH Include="{emsdk}/bin" />
    <EmscriptenPrependPATH Include="{emsdk}/emscripten" />
  </ItemGroup>""",
    "Node": """  <PropertyGroup>
    <EmscriptenNodeToolsPath>{emsdk}/node/</EmscriptenNodeToolsPath>
  </PropertyGroup>
  <ItemGroup>
    <EmscriptenPrependPATH Include="{emsdk}/node/bin" />
  </ItemGroup>""",
    # A WasmCachePath other than the frozen cache's directory makes the
    # build let emcc add the library variants the runtime needs.
    "Cache": """  <PropertyGroup>
    <EmscriptenCacheSdkCacheDir>{emcache}/frozen-unused/</EmscriptenCacheSdkCacheDir>
    <WasmCachePath Condition="'$(WasmCachePath)' == ''">{emcache}/</WasmCachePath>
  </PropertyGroup>""",
}


def manifest(dotnet_root):
    found = sorted(glob.glob(os.path.join(dotnet_root, "sdk-manifests", "*",
        "microsoft.net.workload.emscripten.current", "*",
        "WorkloadManifest.json")))
    if not found:
        sys.exit("stub-packs.py: no emscripten workload manifest under "
                 + dotnet_root)
    with open(found[-1]) as f:
        return json.load(f)


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: stub-packs.py DOTNET_ROOT EMSDK EMCACHE OUTDIR")
    dotnet_root, emsdk, emcache, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    made = 0
    for pack in manifest(dotnet_root)["packs"].values():
        pid = pack.get("alias-to", {}).get(RID)
        if not pid:
            continue
        kind = pid.rsplit(".", 2)[-2]
        if kind not in PROPS:
            sys.exit("stub-packs.py: no placeholder for " + pid)
        version = pack["version"]
        path = os.path.join(out, f"{pid.lower()}.{version}.nupkg")
        with zipfile.ZipFile(path, "w") as z:
            z.writestr(pid + ".nuspec", NUSPEC.format(id=pid,
                version=version, emsdk=emsdk))
            z.writestr("Sdk/Sdk.props", "<Project>\n" + PROPS[kind].format(
                emsdk=emsdk, emcache=emcache) + "\n</Project>\n")
            z.writestr("Sdk/Sdk.targets", "<Project />\n")
        print(f"stub-packs.py: {pid} {version}")
        made += 1
    if made == 0:
        sys.exit("stub-packs.py: the manifest names no pack for " + RID)


if __name__ == "__main__":
    main()
