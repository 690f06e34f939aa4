OK_FORMAT = True

test = {   'name': 'q3',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import roofline\n'
                                               '>>> from gpuperf.grading import answered, call, check_close\n'
                                               '>>> check_close("critical_batch(\'H100-SXM\', 2)", call(\'critical_batch\', critical_batch, \'H100-SXM\', 2), '
                                               "roofline.critical_batch_size('H100-SXM', 'bf16'), hints={2.0: 'the weights are 2 bytes each but a multiply-add is 2 FLOPs', 0.5: 'intensity ≈ 2·B·D·F "
                                               "/ (bytes per weight · D·F)'})\n"
                                               ">>> _ = answered('critical_bf16', critical_bf16)\n"
                                               ">>> _ = answered('critical_int8_h100', critical_int8_h100)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
