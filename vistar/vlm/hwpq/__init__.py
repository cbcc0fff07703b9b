"""HWPQ (VISTAR §3.4): hierarchical weighted positive/negative questionnaires for the abstract angles
SF, CUL and MA — written once per prompt offline, answered by a VLM online with a k-vote majority."""
