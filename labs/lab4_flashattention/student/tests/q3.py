OK_FORMAT = True

test = {   'name': 'q3',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf.grading import call, check_attention, check_true\n'
                                               '>>> gen = torch.Generator().manual_seed(3)\n'
                                               '>>> q, k, v, do = (torch.randn(1, 2, 40, 16, generator=gen) for _ in range(4))\n'
                                               '>>> qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))\n'
                                               '>>> o = attention_ref(qg, kg, vg)\n'
                                               '>>> o.backward(do)\n'
                                               '>>> lse = torch.logsumexp(q @ k.transpose(-1, -2) / 16 ** 0.5, dim=-1)\n'
                                               ">>> grads = call('flash_attention_backward', flash_attention_backward, q, k, v, o.detach(), lse, do, False)\n"
                                               ">>> check_true(isinstance(grads, tuple) and len(grads) == 3, 'flash_attention_backward should return the tuple (dq, dk, dv)')\n"
                                               ">>> for name, got, want, what in [('dv', grads[2], vg.grad, 'key'), ('dq', grads[0], qg.grad, 'query'), ('dk', grads[1], kg.grad, 'key')]:\n"
                                               "...     check_attention(f'{name} (seq 40, d 16, not causal)', got, want, block_m=16, rows=what, atol=0.0001, rtol=0.001)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
