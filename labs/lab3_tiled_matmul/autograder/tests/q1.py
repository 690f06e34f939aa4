OK_FORMAT = True

test = {   'name': 'q1',
    'points': 4,
    'suites': [   {   'cases': [   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf.grading import call, check_tensor\n'
                                               '>>> gen = torch.Generator().manual_seed(1)\n'
                                               '>>> a = torch.randn(64, 32, generator=gen).to(DEVICE)\n'
                                               '>>> b = torch.randn(32, 80, generator=gen).to(DEVICE)\n'
                                               ">>> check_tensor('tiled_matmul(a, b) for 64×32·32×80', call('tiled_matmul', tiled_matmul, a, b, 32, 32, 16), a @ b, atol=0.001, rtol=0.001, block=(32, "
                                               '32))\n',
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf.grading import call, check_tensor\n'
                                               '>>> gen = torch.Generator().manual_seed(2)\n'
                                               '>>> for m, k, n in [(70, 40, 50), (5, 3, 7)]:\n'
                                               '...     a = torch.randn(m, k, generator=gen).to(DEVICE)\n'
                                               '...     b = torch.randn(k, n, generator=gen).to(DEVICE)\n'
                                               "...     check_tensor(f'tiled_matmul(a, b) for {m}×{k}·{k}×{n}', call('tiled_matmul', tiled_matmul, a, b, 32, 32, 16), a @ b, atol=0.001, rtol=0.001, "
                                               'block=(32, 32))\n',
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
