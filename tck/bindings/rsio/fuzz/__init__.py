"""RS-IO's fuzz programs for the binding-neutral engine (``rsio_tck.fuzz``).

- ``program``: hypothesis strategies that draw programs (scenarios) of episodes;
- ``publisher``: the kit-as-publisher episode through ``tck/subscribe``;
- ``mutate``: malformed input from the scapy layer (``rsio_tck.bindings.rsio.dissect``);
- ``bystander``: a second connection that watches each example (ERR-3).

The engine reaches them through ``RsioBinding.fuzz_programs()`` and ``fuzz_bystander()``.
"""
