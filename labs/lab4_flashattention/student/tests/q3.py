OK_FORMAT = True

test = {   'name': 'q3',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf.grading import call, check_attention, check_true\n'
                                               '>>> from gpuperf.kernels.flash_attention import attention_ref as _ref\n'
                                               '>>> from gpuperf.runtime import DEVICE\n'
                                               '>>> _gen = torch.Generator().manual_seed(3)\n'
                                               '>>> _q, _k, _v, _do = (torch.randn(1, 2, 40, 16, generator=_gen).to(DEVICE) for _ in range(4))\n'
                                               '>>> _qg, _kg, _vg = (t.clone().requires_grad_() for t in (_q, _k, _v))\n'
                                               '>>> _o = _ref(_qg, _kg, _vg)\n'
                                               '>>> _o.backward(_do)\n'
                                               '>>> _lse = torch.logsumexp(_q @ _k.transpose(-1, -2) / 16 ** 0.5, dim=-1)\n'
                                               ">>> _grads = call('flash_attention_backward', flash_attention_backward, _q, _k, _v, _o.detach(), _lse, _do, False)\n"
                                               ">>> check_true(isinstance(_grads, tuple) and len(_grads) == 3, 'flash_attention_backward should return the tuple (dq, dk, dv)')\n"
                                               ">>> for _name, _got, _want, _what in [('dv', _grads[2], _vg.grad, 'key'), ('dq', _grads[0], _qg.grad, 'query'), ('dk', _grads[1], _kg.grad, 'key')]:\n"
                                               "...     check_attention(f'{_name} (seq 40, d 16, not causal)', _got, _want, block_m=16, rows=_what, atol=0.0001, rtol=0.001)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
