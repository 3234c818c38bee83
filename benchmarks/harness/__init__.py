"""What the benchmark scripts share: the machine's description and model options (``bench``), the ClapNQ
samples (``clapnq``), and vLLM's OpenAI server started from Python (``vllm_server``)."""
