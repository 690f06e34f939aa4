OK_FORMAT = True

test = {   'name': 'q1',
    'points': 4,
    'suites': [   {   'cases': [   {   'code': '>>> import torch\n'
                                               '>>> import triton\n'
                                               '>>> from gpuperf.grading import call, check_padding, check_tensor, padded\n'
                                               '>>> from gpuperf.runtime import DEVICE\n'
                                               '>>> _x = padded(torch.linspace(-3, 3, 1000, device=DEVICE), 1024)\n'
                                               '>>> _b = padded(torch.linspace(1, -1, 1000, device=DEVICE), 1024)\n'
                                               '>>> _y = padded(torch.zeros(1000, device=DEVICE), 1024, fill=-31337.0)\n'
                                               '>>> _want = torch.relu(1.5 * _x + _b)\n'
                                               ">>> call('_axpb_relu_kernel', lambda: _axpb_relu_kernel[triton.cdiv(1000, 256),](_x, _b, _y, 1.5, 1000, BLOCK_SIZE=256))\n"
                                               ">>> check_padding('y', _y)\n"
                                               ">>> check_tensor('axpb_relu(1.5, x, b)', _y, _want, block=256)\n",
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q1', globals())\n", 'hidden': True, 'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q1_traffic', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
