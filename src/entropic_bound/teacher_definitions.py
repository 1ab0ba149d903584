"""The two attention teachers, defined once (imports nothing heavy).

The tasks compute exactly these (``tasks/attention_teachers.py``), ``entropic-bound list`` shows them
(the registry's summaries) and ``predict --help`` states them. ``predict`` estimates the kernel up
to scale — ``K̂`` absorbs the ``1/√d`` (and the linear teacher's ``1/n``) — so its ``r*`` is ``rank K*``.
"""

LINEAR_QK_TEACHER = "Y = (X K* Xᵀ / √d) X V* / n + E"
SOFTMAX_TEACHER = "Y = softmax(X K* Xᵀ / √d) X V* + E"

#: ``predict --teacher`` name → definition.
PREDICT_TEACHERS = {"linear-qk": LINEAR_QK_TEACHER, "softmax": SOFTMAX_TEACHER}
