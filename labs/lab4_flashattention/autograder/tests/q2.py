OK_FORMAT = True

test = {   'name': 'q2',
    'points': 6,
    'suites': [   {   'cases': [   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf.grading import call, check_attention, check_true\n'
                                               '>>> gen = torch.Generator().manual_seed(1)\n'
                                               '>>> q, k, v = (torch.randn(1, 2, 40, 16, generator=gen) for _ in range(3))\n'
                                               '>>> s = q @ k.transpose(-1, -2) / 16 ** 0.5\n'
                                               ">>> result = call('flash_attention_forward', flash_attention_forward, q.to(DEVICE), k.to(DEVICE), v.to(DEVICE))\n"
                                               ">>> check_true(isinstance(result, tuple) and len(result) == 2, 'flash_attention_forward should return the tuple (o, L)')\n"
                                               ">>> check_attention('o (seq 40, d 16, not causal)', result[0], attention_ref(q, k, v), block_m=16, lse=result[1], lse_expected=torch.logsumexp(s, "
                                               'dim=-1), max_scores=s.amax(dim=-1))\n',
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf.grading import call, check_attention, check_true\n'
                                               '>>> gen = torch.Generator().manual_seed(2)\n'
                                               '>>> for b, h, n, d, causal in [(2, 1, 33, 32, True), (1, 1, 16, 16, True), (1, 2, 50, 16, False)]:\n'
                                               '...     q, k, v = (torch.randn(b, h, n, d, generator=gen) * 2 for _ in range(3))\n'
                                               '...     s = q @ k.transpose(-1, -2) / d ** 0.5\n'
                                               '...     if causal:\n'
                                               "...         s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float('-inf'))\n"
                                               "...     o, lse = call('flash_attention_forward', flash_attention_forward, q.to(DEVICE), k.to(DEVICE), v.to(DEVICE), causal)\n"
                                               "...     check_attention(f'o (batch {b}, heads {h}, seq {n}, d {d}, causal={causal})', o, attention_ref(q, k, v, is_causal=causal), block_m=16, "
                                               'lse=lse, lse_expected=torch.logsumexp(s, dim=-1), max_scores=s.amax(dim=-1))\n'
                                               '>>> q, k, v = (torch.randn(1, 2, 24, 16, generator=gen).to(DEVICE) for _ in range(3))\n'
                                               ">>> saved = call('LabFlashAttention.apply', LabFlashAttention.apply, q.requires_grad_(), k, v).grad_fn.saved_tensors\n"
                                               ">>> check_true(len(saved) == 5 and tuple(saved[4].shape) == (1, 2, 24), 'LabFlashAttention must save q, k, v, o and L (shaped like q without its last "
                                               "dim)')\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
