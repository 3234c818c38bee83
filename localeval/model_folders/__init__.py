"""Local model folders: where they live, how a name resolves, how the defaults are built, what that needs."""

from localeval.errors import ModelNotFound
from localeval.model_folders.location import checkout_root, models_dir, models_location
from localeval.model_folders.offline import set_offline
from localeval.model_folders.prepare_defaults import MARKER, prepare
from localeval.model_folders.resolve import check_model_folder, model_fingerprint, resolve_model
from localeval.model_folders.weight_packages import DEFAULT_EMBEDDER, DEFAULT_JUDGE

__all__ = [
    "DEFAULT_EMBEDDER",
    "DEFAULT_JUDGE",
    "MARKER",
    "ModelNotFound",
    "check_model_folder",
    "checkout_root",
    "model_fingerprint",
    "models_dir",
    "models_location",
    "prepare",
    "resolve_model",
    "set_offline",
]
