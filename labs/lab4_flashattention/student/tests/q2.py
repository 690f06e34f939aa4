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
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
