OK_FORMAT = True

test = {   'name': 'q3',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import cost\n'
                                               '>>> from gpuperf.grading import check_mapping\n'
                                               ">>> check_mapping('fused_intensity', fused_intensity, {p: cost.elementwise(1000, p, flops_per_element=3, n_inputs=2).intensity for p in ['fp32', "
                                               "'fp16']})\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> from gpuperf import cost, roofline\n'
                                               '>>> from gpuperf.grading import check_mapping\n'
                                               ">>> check_mapping('matmul_256_bound', matmul_256_bound, {p: roofline.time_bounds(cost.matmul(256, 256, 256, p), 'T4', p).bound for p in ['fp32', "
                                               "'fp16']})\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
