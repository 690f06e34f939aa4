OK_FORMAT = True

test = {   'name': 'q2',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf.grading import call, check_close\n'
                                               '>>> from gpuperf.kernels.copy import copy_cost\n'
                                               ">>> ref = copy_cost(1000, 'fp32', stride=8)\n"
                                               ">>> check_close('copy_bytes(1000, 8, 4)', call('copy_bytes', copy_bytes, 1000, 8, 4), ref.bytes_read + ref.bytes_written, unit='B', hints={2 / 9: 'a "
                                               "stride-8 fp32 read fetches a whole 32-byte sector per element', 8 / 9: 'count the bytes written too'})\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> from gpuperf.grading import call, check_close\n'
                                               '>>> from gpuperf.kernels.copy import copy_cost\n'
                                               ">>> for n, stride, size, precision in [(4096, 1, 4, 'fp32'), (777, 2, 2, 'fp16'), (5000, 64, 4, 'fp32'), (100, 4, 4, 'fp32')]:\n"
                                               '...     ref = copy_cost(n, precision, stride=stride)\n'
                                               "...     check_close(f'copy_bytes({n}, {stride}, {size})', call('copy_bytes', copy_bytes, n, stride, size), ref.bytes_read + ref.bytes_written, "
                                               "unit='B')\n"
                                               ">>> fp32 = [copy_cost(2 ** 20, 'fp32', stride=s) for s in (8, 1)]\n"
                                               ">>> check_close('predicted_slowdown', predicted_slowdown, (fp32[0].bytes_read + fp32[0].bytes_written) / (fp32[1].bytes_read + "
                                               'fp32[1].bytes_written))\n',
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
