OK_FORMAT = True

test = {   'name': 'q1',
    'points': 4,
    'suites': [   {   'cases': [   {   'code': '>>> import torch\n'
                                               '>>> import triton\n'
                                               '>>> from gpuperf.grading import call, check_padding, check_tensor, padded\n'
                                               '>>> from gpuperf.runtime import DEVICE\n'
                                               '>>> _gen = torch.Generator().manual_seed(1)\n'
                                               '>>> _a = padded(torch.randn(64, 32, generator=_gen).to(DEVICE), 4096)\n'
                                               '>>> _b = padded(torch.randn(32, 80, generator=_gen).to(DEVICE), 4096)\n'
                                               '>>> _c = padded(torch.zeros(64, 80, device=DEVICE), 4096, fill=-31337.0)\n'
                                               '>>> _want = _a @ _b\n'
                                               ">>> call('_matmul_kernel', lambda: _matmul_kernel[triton.cdiv(64, 32), triton.cdiv(80, 32)](_a, _b, _c, 64, 80, 32, _a.stride(0), _a.stride(1), "
                                               '_b.stride(0), _b.stride(1), _c.stride(0), _c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=16))\n'
                                               ">>> check_padding('C', _c)\n"
                                               ">>> check_tensor('tiled_matmul(a, b) for 64×32·32×80', _c, _want, atol=0.001, rtol=0.001, block=(32, 32))\n",
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q1', globals())\n", 'hidden': True, 'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q1_traffic', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
