OK_FORMAT = True

test = {   'name': 'q2',
    'points': 6,
    'suites': [   {   'cases': [   {   'code': '>>> import math\n'
                                               '>>> import torch\n'
                                               '>>> import triton\n'
                                               '>>> from gpuperf.grading import call, check_attention, check_padding, check_true, padded\n'
                                               '>>> from gpuperf.kernels.flash_attention import attention_ref as _ref\n'
                                               '>>> from gpuperf.runtime import DEVICE\n'
                                               '>>> _gen = torch.Generator().manual_seed(1)\n'
                                               '>>> _q, _k, _v = (torch.randn(1, 2, 40, 16, generator=_gen).to(DEVICE) for _ in range(3))\n'
                                               '>>> _s = _q @ _k.transpose(-1, -2) / 16 ** 0.5\n'
                                               '>>> _qp, _kp, _vp = (padded(t, 1024) for t in (_q, _k, _v))\n'
                                               '>>> _o = padded(torch.zeros_like(_q), 1024, fill=-31337.0)\n'
                                               ">>> _lse = padded(torch.full((1, 2, 40), float('nan'), device=DEVICE), 1024, fill=-31337.0)\n"
                                               ">>> call('_attn_fwd_kernel', lambda: _attn_fwd_kernel[triton.cdiv(40, 16), 2](_qp, _kp, _vp, _o, _lse, 40, 1 / math.sqrt(16), 40 * 16, 16, "
                                               "IS_CAUSAL=False, BLOCK_M=16, BLOCK_N=16, HEAD_DIM=16, DOT_PRECISION='ieee'))\n"
                                               ">>> check_padding('o', _o)\n"
                                               ">>> check_padding('L', _lse)\n"
                                               '>>> _zeros = torch.zeros(1, 2, 8, 16, device=DEVICE)\n'
                                               '>>> _unmasked = _ref(_q, torch.cat([_k, _zeros], -2), torch.cat([_v, _zeros], -2))\n'
                                               ">>> check_attention('o (seq 40, d 16, not causal)', _o, _ref(_q, _k, _v), block_m=16, lse=_lse, lse_expected=torch.logsumexp(_s, dim=-1), "
                                               "max_scores=_s.amax(dim=-1), slips={'keys past the end of the sequence get the score 0 instead of -inf, so they take weight from the real keys: set s "
                                               "to -inf where offs_n >= seq_len (the key mask), before the max': _unmasked})\n"
                                               ">>> _result = call('flash_attention_forward', flash_attention_forward, _q, _k, _v)\n"
                                               ">>> check_true(isinstance(_result, tuple) and len(_result) == 2, 'flash_attention_forward should return the tuple (o, L)')\n",
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q2', globals())\n", 'hidden': True, 'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q2_traffic', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
