OK_FORMAT = True

test = {   'name': 'q4',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf import numerics\n'
                                               '>>> from gpuperf.grading import answered, call, check_close, check_true\n'
                                               ">>> _fp16 = numerics.FORMATS['fp16']\n"
                                               ">>> _limits = call('format_limits', format_limits, 5, 10)\n"
                                               ">>> check_true(isinstance(_limits, tuple) and len(_limits) == 3, 'format_limits should return a tuple (largest_finite, smallest_normal, "
                                               "unit_roundoff)')\n"
                                               ">>> check_close('format_limits(5, 10)[0] (largest finite)', _limits[0], _fp16.largest_finite, rtol=1e-09, hints={2.0: 'the top exponent is reserved "
                                               "for inf and NaN', 65536 / 65504: 'the largest mantissa is 1.11…1 = 2 - 2**-M, not 2'})\n"
                                               ">>> check_close('format_limits(5, 10)[1] (smallest normal)', _limits[1], _fp16.smallest_normal, rtol=1e-09)\n"
                                               ">>> check_close('format_limits(5, 10)[2] (unit roundoff)', _limits[2], _fp16.unit_roundoff, rtol=1e-09, hints={2.0: 'the unit roundoff is half the "
                                               "machine epsilon: 2**-(M + 1)'})\n"
                                               ">>> _ = answered('acc_errors', acc_errors)\n"
                                               '>>> check_true(isinstance(acc_errors, dict) and set(acc_errors) == {\'fp16\', \'fp32\'}, \'acc_errors should be a dict with the keys "fp16" and '
                                               '"fp32"\')\n',
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
