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
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
